"""A run's report in one of the formats, as text (the run: see localeval.runs.sources)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localeval.errors import UsageError

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
    if report_format == "html":
        from localeval.report.html import render_html

        return render_html(results, baseline)
    if report_format == "md":
        from localeval.report.markdown import render_markdown

        return render_markdown(results, baseline, worst=worst)
    if report_format == "junit":
        from localeval.report.junit import render_junit

        return render_junit(results, samples=junit_samples)
    return json.dumps(results, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
