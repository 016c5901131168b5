"""A run's report in one of the formats, as text (the run: see localeval.evaluation.sources)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localeval.errors import UsageError
from localeval.results.view import read_run

FORMATS = ("html", "md", "junit", "json")


def render_report(
    results: Mapping[str, Any],
    report_format: str,
    baseline: Mapping[str, Any] | None = None,
    junit_samples: bool = False,
    worst: int = 5,
) -> str:
    """The report of a results dict (and a baseline run's, for html and md)."""
    if report_format not in FORMATS:
        raise UsageError(f"unknown report format '{report_format}' (use {', '.join(FORMATS)})")
    if report_format == "json":
        return json.dumps(results, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    run = read_run(results)  # read once, whichever report is drawn from it
    base = None if baseline is None else read_run(baseline)
    if report_format == "html":
        from localeval.reports.html import render_html

        return render_html(run, base)
    if report_format == "md":
        from localeval.reports.markdown import render_markdown

        return render_markdown(run, base, worst=worst)
    from localeval.reports.junit import render_junit

    return render_junit(run, samples=junit_samples)
