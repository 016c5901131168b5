"""Peak memory of `localeval evaluate` on a small and a large synthetic dataset.

    python scripts/measure_memory.py [--sizes 100 100000] [--format jsonl|json|csv]

Each size runs in a process of its own with the instant, deterministic fake models (the
"fake" backend, in a models.toml of its own), so what is measured is localeval's own
memory: reading the data, the scoring loop, the run-history database, the summaries and
results.json. The target
(issue 6): the peak for 100,000 samples within 300 MB of the peak for 100.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAKE_MODELS = '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n'


def sample(i: int) -> dict[str, object]:
    return {
        "sample_id": f"s{i}",
        "category": f"topic-{i % 5}",
        "question": f"What does clause {i} of the contract say about refunds?",
        "contexts": [
            f"Clause {i}: refunds are issued within {i % 30 + 1} days of a written request.",
            f"Clause {i + 1} covers delivery times, which are {i % 9 + 2} working days.",
            "The contract is governed by the law of the country of the seller.",
        ],
        "answer": f"Refunds come within {i % 30 + 1} days of a written request. "
        "Delivery is not covered by this clause.",
        "reference_answer": f"Within {i % 30 + 1} days of a written request.",
    }


def write_data(path: Path, n: int, form: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        if form == "jsonl":
            for i in range(n):
                handle.write(json.dumps(sample(i)) + "\n")
        elif form == "json":  # one line, as json.dump writes it
            handle.write("[" + ",".join(json.dumps(sample(i)) for i in range(n)) + "]")
        else:
            writer = csv.writer(handle)
            fields = list(sample(0))
            writer.writerow(fields)
            for i in range(n):
                row = sample(i)
                writer.writerow([json.dumps(row[f]) if f == "contexts" else row[f] for f in fields])


def peak_rss_mb(n: int, form: str, folder: Path) -> tuple[float, float]:
    """(peak resident memory in MB, seconds) of one evaluate process on n samples."""
    data = folder / f"data-{n}.{form}"
    write_data(data, n, form)
    models = folder / "models.toml"
    models.write_text(FAKE_MODELS, encoding="utf-8")
    env = {**os.environ, "LOCALEVAL_DB": str(folder / f"history-{n}.db")}
    env["LOCALEVAL_MODELS"] = str(models)
    command = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), "--no-progress"]
    command += ["-o", str(folder / f"results-{n}.json")]
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"evaluate failed on {n} samples (exit {status})")
    return usage.ru_maxrss / 1024, seconds  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 100_000])
    parser.add_argument("--format", choices=["jsonl", "json", "csv"], default="jsonl")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for n in args.sizes:
            peak, seconds = peak_rss_mb(n, args.format, Path(tmp))
            results.append((n, peak))
            print(f"{n:>9} samples ({args.format}): peak RSS {peak:8.1f} MB, {seconds:7.1f} s")
        if len(results) > 1:
            growth = results[-1][1] - results[0][1]
            print(f"growth from {results[0][0]} to {results[-1][0]} samples: {growth:.1f} MB")


if __name__ == "__main__":
    main()
