"""JUnit XML: each quality gate as a test case, so a CI system lists failing gates natively.

With `samples=True` a second suite holds one test case per sample: it fails when one of
the sample's scores is below its metric's gate, and is skipped when no metric could be
scored. Test case names are the metric names and sample ids, stable from run to run, so a
CI's test history follows them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

from localeval.reports.templating import template_sources
from localeval.results import view
from localeval.results.corrected import corrected_words
from localeval.results.view import RunView, as_view

#: characters XML 1.0 cannot hold at all, not even escaped
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """Display text that an XML document can hold (escaping is the template's job)."""
    return _NOT_XML.sub("\ufffd", view.text(value))


def _escaped(text: str, table: dict[str, str]) -> Markup:
    for char, entity in table.items():
        text = text.replace(char, entity)
    return Markup(text)


#: what an attribute value and element text escape, as ElementTree writes them: an
#: attribute's line breaks and tabs as character references, so that they are kept
_ATTRIBUTE = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_ATTRIBUTE.update({"\r": "&#13;", "\n": "&#10;", "\t": "&#09;"})
_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def xml_value(value: Any) -> Markup:
    """What the JUnit template writes for a value: the template's own markup as it is,
    anything else escaped as an attribute value (safe in element text too)."""
    if isinstance(value, Markup):
        return value
    return _escaped(xml_text(value), _ATTRIBUTE)


XML = Environment(
    loader=template_sources("localeval.reports", "templates", ".xml.j2"),
    autoescape=True,
    finalize=xml_value,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
XML.filters["text"] = lambda value: _escaped(xml_text(value), _TEXT)
XML.globals.update(
    INDENT3=" " * 6,
    passed_line=lambda gate: gate.line(),
)


@dataclass(frozen=True)
class SampleCase:
    """One sample's test case: skipped (why), failed (the message and the lines), or passed."""

    name: Any
    skipped: str | None = None
    message: str | None = None
    failure: str | None = None


@dataclass
class SamplesSuite:
    cases: list[SampleCase] = field(default_factory=list)
    failures: int = 0
    skipped: int = 0


def render_junit(results: RunView | Mapping[str, Any], samples: bool = False) -> str:
    """The JUnit XML document for a run."""
    run = as_view(results)
    failures = len(run.failed_gates)
    suite = _samples_suite(run) if samples else None
    total = {"tests": len(run.gates), "failures": failures, "errors": 0, "skipped": 0}
    if suite is not None:
        total["tests"] += len(suite.cases)
        total["failures"] += suite.failures
        total["skipped"] += suite.skipped
    seconds = run.usage.seconds if run.usage is not None else 0.0
    return XML.get_template("report.junit.xml.j2").render(
        run=run,
        total=total,
        time=f"{seconds:.3f}",
        gates=run.gates,
        failures=failures,
        properties=_properties(run),
        samples=suite,
    )


def _properties(run: RunView) -> list[tuple[str, Any]]:
    judge, embedder = run.model("judge") or {}, run.model("embedder") or {}
    values = {
        "run": run.run_id,
        "dataset": run.dataset,
        "judge": judge.get("name"),
        "judge_sha256": judge.get("sha256"),
        "embedder": embedder.get("name"),
        "prompt_version": run.prompt_version,
        "samples": run.n_samples,
    }
    found = [(name, value) for name, value in values.items() if value is not None]
    # the means people would give (a CI server lists properties beside the gates' cases)
    for metric, entry in run.corrected.items():
        estimate = entry.estimate
        review = f"`localeval review {run.run_id or 'RUN'}`"
        said = corrected_words(entry, review, run.planned_samples)
        found.append((f"corrected.{metric}", said))
        if estimate is not None:
            found.append((f"corrected.{metric}.mean", f"{estimate.mean:.4f}"))
    return found


def _samples_suite(run: RunView) -> SamplesSuite:
    suite = SamplesSuite()
    for sample in run.samples:
        case = _sample_case(sample, run.thresholds)
        suite.cases.append(case)
        suite.skipped += case.skipped is not None
        suite.failures += case.failure is not None
    return suite


def _sample_case(sample: Mapping[str, Any], limits: Mapping[str, float]) -> SampleCase:
    """A sample's case: skipped when no metric could be scored, failed when a score is
    below its metric's gate."""
    name = sample.get("sample_id")
    scores = sample.get("scores", {})
    details = sample.get("details", {})
    details = details if isinstance(details, dict) else {}
    defined = {m: view.number(s) for m, s in scores.items() if view.number(s) is not None}
    if not defined:
        reasons = "; ".join(
            f"{m}: {h.plain()}"
            for m in scores
            if (h := view.evidence_hint(str(m), details.get(m))) is not None
        )
        return SampleCase(
            name, skipped=f"no metric could be scored ({reasons or 'no reason given'})"
        )
    low = {m: s for m, s in defined.items() if m in limits and s is not None and s < limits[m]}
    if not low:
        return SampleCase(name)
    lines = []
    for metric, score in low.items():
        lines.append(f"{metric} = {score:.3f}, below {limits[metric]:.2f}")
        hint = view.evidence_hint(str(metric), details.get(metric))
        if hint is not None:
            lines.append(f"  {hint.plain()}")
    message = "; ".join(f"{m} {s:.3f} < {limits[m]:.2f}" for m, s in low.items())
    return SampleCase(name, message=message, failure="\n".join(lines))
