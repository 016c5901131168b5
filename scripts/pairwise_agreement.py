"""Pairwise accuracy of faithfulness on labelled pairs: how often the good row scores higher.

For each pair of rows sharing a `pair_id` in a file of ../shared/bench/, the pair counts as
right when faithfulness(label 1 row) > faithfulness(label 0 row), half when they tie.
Used to check that a change to the judge's prompts does not lower agreement with labels.

    flock /tmp/localeval-model.lock python scripts/pairwise_agreement.py \\
        ../shared/bench/wikieval.faithfulness.jsonl --pairs 30
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from localeval.backends.llama_judge import LlamaJudge  # noqa: E402
from localeval.config import load_models_config  # noqa: E402
from localeval.data.samples import Sample, load_samples  # noqa: E402
from localeval.engine import evaluate  # noqa: E402
from localeval.metrics import Tools  # noqa: E402


def first_pairs(samples: Sequence[Sample], n_pairs: int) -> list[tuple[Sample, Sample]]:
    """The first `n_pairs` complete (good, bad) pairs, in file order."""
    groups: dict[object, list[Sample]] = {}
    for sample in samples:
        groups.setdefault(sample.extra["pair_id"], []).append(sample)
    pairs = []
    for members in groups.values():
        good = [s for s in members if s.extra["label"] == 1]
        bad = [s for s in members if s.extra["label"] == 0]
        if good and bad:
            pairs.append((good[0], bad[0]))
        if len(pairs) == n_pairs:
            break
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--judge", default=None)
    parser.add_argument("--n-ctx", type=int, default=None, help="override the judge's n_ctx")
    args = parser.parse_args(argv)

    pairs = first_pairs(load_samples(args.bench), args.pairs)
    config = load_models_config().judge(args.judge)
    settings = config.settings
    if args.n_ctx:
        settings = dataclasses.replace(settings, n_ctx=args.n_ctx)
    judge = LlamaJudge(config.name, settings)
    started = time.perf_counter()
    run = evaluate([s for pair in pairs for s in pair], ["faithfulness"], Tools(judge=judge))
    seconds = time.perf_counter() - started
    scores = [r.results["faithfulness"].score for r in run.samples]
    right = 0.0
    windowed = sum("long_context" in r.results["faithfulness"].details for r in run.samples)
    for good, bad in zip(scores[::2], scores[1::2], strict=True):
        if good is None or bad is None:
            continue
        right += 1.0 if good > bad else 0.5 if good == bad else 0.0
    print(
        f"{args.bench.name}: {right:g}/{len(pairs)} pairs right "
        f"({right / len(pairs):.3f}); n_ctx {judge.n_ctx}, {windowed} rows windowed; "
        f"judge calls {run.usage.judge_calls}, prompt tokens {run.usage.prompt_tokens}, "
        f"{seconds:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
