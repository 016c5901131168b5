"""How often the mean corrected by labels holds the mean people would give, and how wide
its interval is: a team labelling n random samples of a scored set, simulated.

Reads scored labelled rows -- `localeval calibrate FILE --output X.json` files (their
"rows") or JSON lines of the same row fields -- and, per set (a row's `set`, else its
dataset and metric), takes every row with a judge score as the population: people's
value per row (the label; for context precision the rank-weighted precision of
`context_labels`, the metric's own formula) and the judge's score. Then, for each n,
`--draws` times: n rows drawn at random are "labelled", and the product's estimator
(localeval.prediction_powered.corrected_mean) gives the labels-only, PPI (lam = 1) and
PPI++ (power-tuned) intervals. Also active selection against uniform Poisson sampling of
the same expected n (inverse-probability weighted PPI++, below). Prints one table per set
and writes every figure to --output (JSON).

Usage: python scripts/ppi_coverage.py ROWS... [--draws 1000] [--n 10,20,40,80,150]
       [--dev SET,SET] [--output coverage.json]
docs/measurements/judge-quality.md ("Corrected by labels") gives the figures and the commands.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localeval import prediction_powered
from localeval.metrics.context_precision import average_precision

#: an interval: (low, high, point estimate)
Interval = tuple[float, float, float]
Estimator = Callable[[np.ndarray, np.ndarray, np.ndarray], Interval]


def read_rows(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Every row of the files (a row scored twice: its last record), by id when present."""
    rows: dict[Any, dict[str, Any]] = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if text.lstrip().startswith("{") and '"rows"' in text[:200_000]:
            with contextlib.suppress(json.JSONDecodeError):
                for k, row in enumerate(json.loads(text)["rows"]):
                    rows[row.get("id", (str(path), k))] = row
                continue
        for k, line in enumerate(text.splitlines()):
            with contextlib.suppress(json.JSONDecodeError):  # a line cut by a stopped run
                row = json.loads(line)
                rows[row.get("id", (str(path), k))] = row
    return list(rows.values())


def person_value(row: dict[str, Any]) -> float | None:
    """People's value on the metric's scale: the label, or for context precision the
    rank-weighted precision of the chunks people marked as needed."""
    if row.get("metric") == "context_precision" and row.get("chunk_labels") is not None:
        return average_precision(row["chunk_labels"])
    label = row.get("label")
    return None if label is None else float(label)


def uncertainty(row: dict[str, Any]) -> float:
    """How unsure the judge is of a sample: sqrt(sum p(1 - p)) / K over its K raw verdict
    probabilities (the spread of a mean of K yes/no verdicts); 1 without any."""
    probs = row.get("verdicts") if row.get("verdict_kind") else None
    if not probs:
        return 1.0
    p = np.clip(np.asarray(probs, dtype=float), 0.0, 1.0)
    return float(math.sqrt(float((p * (1 - p)).sum())) / len(p))


def populations(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per set: people's values, the judge's scores, the judge's uncertainty; rows without
    a judge score or a person's value are counted and left out."""
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row.get("set") or f"{row['dataset']}.{row['metric']}"].append(row)
    out = {}
    for name, members in grouped.items():
        kept = [r for r in members if r.get("score") is not None and person_value(r) is not None]
        out[name] = {
            "y": np.asarray([person_value(r) for r in kept], dtype=float),
            "f": np.asarray([r["score"] for r in kept], dtype=float),
            "u": np.asarray([uncertainty(r) for r in kept], dtype=float),
            "left_out": len(members) - len(kept),
        }
    return out


def product_estimators() -> dict[str, Estimator]:
    """The product's estimator as labels-only, PPI (lam = 1) and PPI++ (tuned)."""

    def ppi(lam: float | None, labels_only: bool = False) -> Estimator:
        def run(y: np.ndarray, f_labelled: np.ndarray, f_all: np.ndarray) -> Interval:
            c = prediction_powered.corrected_mean(f_all, f_labelled, y, lam=lam)
            if labels_only:
                return (*c.labels_only_ci95, c.labels_only_mean)
            return (*c.ci95, c.mean)

        return run

    return {"labels_only": ppi(None, True), "ppi": ppi(1.0), "ppi_pp": ppi(None)}


def weighted_ppi_pp(y: np.ndarray, f: np.ndarray, labelled: np.ndarray, p: np.ndarray) -> Interval:
    """PPI++ under Poisson sampling (row i labelled with probability p_i): the mean over
    all N rows of lam f_i + (y_i - lam f_i) 1[labelled] / p_i, lam the variance-minimising
    value clipped to [0, 1]; normal interval over the N terms."""
    weight = labelled / p
    people = np.where(labelled, y, 0.0) * weight
    judge = f * (1 - weight)
    spread = judge.var(ddof=1)
    lam = float(np.clip(-np.cov(people, judge)[0, 1] / spread, 0, 1)) if spread > 0 else 0.0
    terms = people + lam * judge
    error = terms.std(ddof=1) / math.sqrt(len(terms))
    return (
        terms.mean() - prediction_powered.Z95 * error,
        terms.mean() + prediction_powered.Z95 * error,
        terms.mean(),
    )


def figures(results: Sequence[Interval], truths: Sequence[float]) -> dict[str, float]:
    """Coverage of each draw's true mean, mean width, mean and mean absolute error."""
    low, high, point = (np.asarray(x, dtype=float) for x in zip(*results, strict=True))
    truth = np.asarray(truths, dtype=float)
    held = np.isfinite(low) & (low <= truth) & (truth <= high)
    return {
        "coverage": float(held.mean()),
        "width": float(np.nanmean(high - low)),
        "mean_error": float(np.nanmean(point - truth)),
        "mean_abs_error": float(np.nanmean(np.abs(point - truth))),
    }


def draw_once(
    pop: dict[str, Any], n: int, run_size: int, rng: np.random.Generator
) -> tuple[float, dict[str, Interval]]:
    """One team's run and labels: the run is the set itself (run_size 0) or run_size rows
    drawn with replacement from it; n random rows of it for the product's estimators, and
    one Poisson draw each for uniform and active selection of the same expected n.
    Returns the run's people mean and every interval."""
    y, f, u = pop["y"], pop["f"], pop["u"]
    if run_size:
        rows = rng.integers(0, len(y), run_size)
        y, f, u = y[rows], f[rows], u[rows]
    size = len(y)
    pick = rng.choice(size, n, replace=False)
    out = {name: run(y[pick], f[pick], f) for name, run in product_estimators().items()}
    active = np.minimum(1.0, n * (0.5 * u / u.sum() + 0.5 / size))
    for name, p in (("uniform_poisson", np.full(size, n / size)), ("active", active)):
        labelled = rng.random(size) < p
        fails = labelled.sum() < 2
        out[name] = (math.nan,) * 3 if fails else weighted_ppi_pp(y, f, labelled, p)
    return float(y.mean()), out


def normal_widths(y: np.ndarray, f: np.ndarray, n: int) -> dict[str, float]:
    """The 95% widths at n labels by the normal formula with the set's own spreads (a
    setting too big to simulate on the set, such as ARES' 150 labels)."""
    spread = float(np.var(f, ddof=1))
    lam = float(np.clip(np.cov(y, f)[0, 1] / spread, 0, 1)) if spread > 0 else 0.0
    scale = 2 * prediction_powered.Z95 / math.sqrt(n)
    return {
        "labels_only": scale * float(np.std(y, ddof=1)),
        "ppi": scale * float(np.std(y - f, ddof=1)),
        "ppi_pp": scale * float(np.std(y - lam * f, ddof=1)),
    }


def simulate(
    pop: dict[str, Any], sizes: Sequence[int], draws: int, run_size: int
) -> dict[str, Any]:
    """Every figure of one set: its judge's raw bias and correlation, then per n."""
    y, f = pop["y"], pop["f"]
    report: dict[str, Any] = {
        "N": len(y),
        "left_out": pop["left_out"],
        "run_size": run_size or len(y),
        "people_mean": float(y.mean()),
        "judge_mean": float(f.mean()),
        "raw_bias": float(f.mean() - y.mean()),
        "pearson": float(np.corrcoef(y, f)[0, 1]) if y.std() > 0 and f.std() > 0 else None,
        "normal_widths": {n: normal_widths(y, f, n) for n in (40, 150)},
        "by_n": {},
    }
    for n in sizes:
        # n must leave unlabelled samples in the run; 150 only where the run is twice as big
        if n > report["run_size"] - 20 or (n >= 150 and report["run_size"] < 2 * n):
            continue
        rng = np.random.default_rng(4600 + n)
        truths: list[float] = []
        runs: dict[str, list[Interval]] = defaultdict(list)
        for _ in range(draws):
            truth, intervals = draw_once(pop, n, run_size, rng)
            truths.append(truth)
            for name, interval in intervals.items():
                runs[name].append(interval)
        report["by_n"][n] = {name: figures(r, truths) for name, r in runs.items()}
    return report


def table(name: str, report: dict[str, Any]) -> str:
    """One set's figures as Markdown."""
    r = report
    head = (
        f"{name} ({r['part']}): N={r['N']} (left out {r['left_out']}),"
        f" people {r['people_mean']:.3f}, judge {r['judge_mean']:.3f},"
        f" raw bias {r['raw_bias']:+.3f}, run {r['run_size']}, Pearson r "
        + ("n/a" if r["pearson"] is None else f"{r['pearson']:.2f}")
    )
    normal = "; ".join(
        f"n={n}: " + ", ".join(f"{k} {v:.3f}" for k, v in widths.items())
        for n, widths in r["normal_widths"].items()
    )
    columns = "| n | estimator | coverage | width | ×labels-only | mean error | mean abs error |"
    lines = [head, f"normal-formula widths: {normal}", "", columns]
    lines.append("|---|---|---|---|---|---|---|")
    for n, by in r["by_n"].items():
        base = by["labels_only"]["width"]
        for est, v in by.items():
            lines.append(
                f"| {n} | {est} | {v['coverage']:.3f} | {v['width']:.3f} | {v['width'] / base:.2f}"
                f" | {v['mean_error']:+.4f} | {v['mean_abs_error']:.4f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="+", type=Path, help="scored labelled rows (JSON or JSONL)")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--n", default="10,20,40,80,150", help="labelled samples per draw")
    parser.add_argument("--dev", default="", help="the sets choices are made on (comma-separated)")
    parser.add_argument("--min-rows", type=int, default=60, help="smaller sets are not simulated")
    parser.add_argument(
        "--run-size",
        type=int,
        default=0,
        help="0: the set is the run; M: each draw's run is M rows drawn with replacement",
    )
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(v) for v in args.n.split(",")]
    dev = set(filter(None, args.dev.split(",")))
    out: dict[str, Any] = {}
    pops = populations(read_rows(args.rows))
    for name in sorted(pops, key=lambda k: (k not in dev, k)):
        if len(pops[name]["y"]) < args.min_rows:
            size = len(pops[name]["y"])
            print(f"{name}: {size} rows scored, fewer than {args.min_rows}: skipped\n")
            continue
        out[name] = {"part": "dev" if name in dev else "held-out"}
        out[name].update(simulate(pops[name], sizes, args.draws, args.run_size))
        print(table(name, out[name]) + "\n", flush=True)
    if args.output is not None:
        args.output.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
