"""JUnit XML: each quality gate as a test case, so a CI system lists failing gates natively.

With `samples=True` a second suite holds one test case per sample: it fails when one of
the sample's scores is below its metric's gate, and is skipped when no metric could be
scored. Test case names are the metric names and sample ids, stable from run to run, so a
CI's test history follows them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from localeval.results import view
from localeval.results.corrected import corrected_words
from localeval.results.view import RunView, as_view

#: characters XML 1.0 cannot hold at all, not even escaped
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(value: Any) -> str:
    """Display text that an XML document can hold (escaping is ElementTree's job)."""
    return _NOT_XML.sub("\ufffd", view.text(value))


def _element(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text is not None:
        node.text = xml_text(text)
    return node


def render_junit(results: RunView | Mapping[str, Any], samples: bool = False) -> str:
    """The JUnit XML document for a run."""
    run = as_view(results)
    root = ET.Element("testsuites", {"name": "localeval"})
    gates_suite = _gates_suite(root, run)
    suites = [gates_suite]
    if samples:
        suites.append(_samples_suite(root, run))
    for suite in suites:
        suite.set("timestamp", xml_text(run.created))
        suite.set("hostname", "localhost")
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in suites)))
    seconds = run.usage.seconds if run.usage is not None else 0.0
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _properties(suite: ET.Element, run: RunView) -> None:
    props = ET.SubElement(suite, "properties")
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
    for name, value in values.items():
        if value is not None:
            _element(props, "property", name=name, value=value)
    # the means people would give (a CI server lists properties beside the gates' cases)
    for metric, entry in run.corrected.items():
        found = entry.estimate
        said = corrected_words(entry, f"`localeval review {run.run_id or 'RUN'}`")
        _element(props, "property", name=f"corrected.{metric}", value=said)
        if found is not None:
            _element(props, "property", name=f"corrected.{metric}.mean", value=f"{found.mean:.4f}")


def _gates_suite(root: ET.Element, run: RunView) -> ET.Element:
    gates = run.gates
    failures = len(run.failed_gates)
    suite = _element(
        root,
        "testsuite",
        name="localeval quality gates",
        tests=len(gates),
        failures=failures,
        errors=0,
        skipped=0,
        time="0",
    )
    _properties(suite, run)
    for gate in gates:
        case = _element(suite, "testcase", classname="localeval.gates", name=gate.metric, time="0")
        if gate.passed:
            _element(
                case,
                "system-out",
                f"{gate.metric} = {view.fmt(gate.value)} >= {gate.threshold:.2f}",
            )
            continue
        _element(
            case,
            "failure",
            gate.explanation(),
            type="QualityGateFailed",
            message=gate.title(),
        )
    return suite


def _samples_suite(root: ET.Element, run: RunView) -> ET.Element:
    limits = run.thresholds
    suite = _element(root, "testsuite", name="localeval samples", time="0")
    cases = failures = skipped = 0
    for sample in run.samples:
        cases += 1
        scores = sample.get("scores", {})
        details = sample.get("details", {})
        details = details if isinstance(details, dict) else {}
        case = _element(
            suite,
            "testcase",
            classname="localeval.samples",
            name=sample.get("sample_id"),
            time="0",
        )
        defined = {m: view.number(s) for m, s in scores.items() if view.number(s) is not None}
        if not defined:
            skipped += 1
            reasons = "; ".join(
                f"{m}: {h.plain()}"
                for m in scores
                if (h := view.evidence_hint(str(m), details.get(m))) is not None
            )
            _element(
                case,
                "skipped",
                message=f"no metric could be scored ({reasons or 'no reason given'})",
            )
            continue
        low = {m: s for m, s in defined.items() if m in limits and s is not None and s < limits[m]}
        if not low:
            continue
        failures += 1
        lines = []
        for metric, score in low.items():
            lines.append(f"{metric} = {score:.3f}, below {limits[metric]:.2f}")
            hint = view.evidence_hint(str(metric), details.get(metric))
            if hint is not None:
                lines.append(f"  {hint.plain()}")
        _element(
            case,
            "failure",
            "\n".join(lines),
            type="SampleBelowGate",
            message="; ".join(f"{m} {s:.3f} < {limits[m]:.2f}" for m, s in low.items()),
        )
    for name, count in (
        ("tests", cases),
        ("failures", failures),
        ("errors", 0),
        ("skipped", skipped),
    ):
        suite.set(name, str(count))
    return suite
