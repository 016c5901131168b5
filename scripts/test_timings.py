"""Write docs/measurements/test-timings.md from pytest runs, so that no prose carries them.

Each suite is one pytest run, read from its JUnit XML (`pytest --junitxml=FILE`) or from
its console output with `--durations=N` (the summary line and the slowest tests):

    pytest -m postgres --junitxml=/tmp/pg.xml
    python scripts/test_timings.py --machine "2 cores, shared, load 7" \\
        --suite "pytest -m postgres" /tmp/pg.xml

The page is rewritten whole each time (never edit it by hand); the docs link to it.
"""

from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "measurements" / "test-timings.md"
SLOWEST = 5
#: pytest's last line: "3 passed, 1 failed, 17 deselected in 508.51s (0:08:28)"
SUMMARY = re.compile(r"=*\s*((?:\d+ \w+(?:, )?)+) in ([\d.]+)s")
#: a line of `--durations`: "355.13s call     tests/test_x.py::test_y"
DURATION = re.compile(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+)$")


@dataclass
class Suite:
    """One pytest run: its counts by outcome, its wall time and its slowest tests."""

    name: str
    source: str
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    slowest: list[tuple[float, str]] = field(default_factory=list)


def read_junit(name: str, path: Path) -> Suite:
    """A suite from pytest's JUnit XML: every test case's time, the counts of each outcome."""
    root = ElementTree.parse(path).getroot()
    cases = root.iter("testcase")
    suite = Suite(name, path.name)
    times: list[tuple[float, str]] = []
    for case in cases:
        outcome = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "")
        word = {"failure": "failed", "error": "errors", "skipped": "skipped"}.get(outcome, "passed")
        suite.counts[word] = suite.counts.get(word, 0) + 1
        test = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        times.append((float(case.get("time", 0)), test))
    top = root if root.tag == "testsuite" else next(root.iter("testsuite"))
    suite.seconds = float(top.get("time", 0))
    suite.slowest = sorted(times, reverse=True)[:SLOWEST]
    return suite


def read_console(name: str, path: Path) -> Suite:
    """A suite from pytest's console output: its summary line and `--durations` lines."""
    suite = Suite(name, path.name)
    times: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := DURATION.match(line.strip()):
            seconds, test = float(match.group(1)), match.group(2)
            times[test] = times.get(test, 0.0) + seconds
        elif match := SUMMARY.search(line):
            counts = (part.split(" ") for part in match.group(1).split(", "))
            suite.counts = {word: int(count) for count, word in counts}
            suite.seconds = float(match.group(2))
    if not suite.counts:
        raise SystemExit(f"{path}: no pytest summary line ('N passed in S s') in it")
    suite.slowest = sorted(((s, t) for t, s in times.items()), reverse=True)[:SLOWEST]
    return suite


def read_suite(name: str, path: Path) -> Suite:
    return read_junit(name, path) if path.suffix == ".xml" else read_console(name, path)


def page(suites: list[Suite], machine: str) -> str:
    """The whole markdown page: one row per suite, then each suite's slowest tests."""
    lines = [
        "# Test timings",
        "",
        "Written by `scripts/test_timings.py` from pytest's own output; do not edit by hand,",
        "run the script again. Wall times depend on the machine and what else runs on it;",
        "a suite not listed has not been timed through the script yet.",
        "",
        f"Machine: {machine}.",
        "",
        "| suite | tests | outcome | wall time |",
        "|---|---|---|---|",
    ]
    for suite in suites:
        outcome = ", ".join(f"{count} {word}" for word, count in suite.counts.items())
        total = sum(n for word, n in suite.counts.items() if word != "deselected")
        lines.append(f"| {suite.name} | {total} | {outcome} | {suite.seconds:,.1f} s |")
    for suite in suites:
        lines += ["", f"Slowest of {suite.name} (from {suite.source}):", ""]
        lines += [f"- {seconds:,.1f} s `{test}`" for seconds, test in suite.slowest]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True, help="the machine and its load, in words")
    parser.add_argument(
        "--suite",
        nargs=2,
        action="append",
        required=True,
        metavar=("NAME", "FILE"),
        help="a pytest run: its command, and its JUnit XML or console output; repeatable",
    )
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    suites = [read_suite(name, Path(file)) for name, file in args.suite]
    args.output.write_text(page(suites, args.machine), encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
