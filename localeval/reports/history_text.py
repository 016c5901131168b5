"""Plain-text views of the run history: the runs list, one run, and a comparison of two."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from localeval.database import Location, db_words
from localeval.history.records import StoredRun
from localeval.prediction_powered import MIN_LABELLED
from localeval.reports.decision_text import cost_line, decision_line
from localeval.results.corrected import CorrectedSummary
from localeval.results.diff import Comparison, MetricChange
from localeval.results.gates import CORRECTED, JUDGE, GateResult
from localeval.results.person_values import MetricLabels
from localeval.text import counted, printable


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def interval(ci95: tuple[float, float] | None) -> str:
    return "-" if ci95 is None else f"[{ci95[0]:+.3f}, {ci95[1]:+.3f}]"


def _model(model: dict[str, str] | None) -> str:
    return "-" if model is None else printable(model["name"])


def runs_table(runs: Sequence[StoredRun]) -> str:
    """One line per run, newest first; incomplete runs say how far they got."""
    if not runs:
        return "No runs yet: `localeval evaluate DATA` records one."
    rows = [("id", "created", "status", "samples", "judge", "dataset")]
    for run in runs:
        rows.append(
            (
                run.id,
                run.info.created,
                "complete" if run.complete else "INVALID" if run.invalid else "INCOMPLETE",
                f"{run.n_done}/{run.n_samples}",
                _model(run.info.judge),
                printable(run.info.dataset or "-"),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in rows
    )


def run_description(run: StoredRun) -> str:
    """What a run was: its settings, models and state."""
    info = run.info
    if run.complete:
        state = f"complete, finished {run.finished}"
    elif run.invalid is not None:
        state = (
            f"INVALID: {run.invalid}; {run.n_done} of {run.n_samples} samples scored, never "
            "continued (re-run the same command to start a new run)"
        )
    elif info.until_decided is not None:
        state = (
            f"STOPPED BY DESIGN (evaluate --until-decided): {run.n_done} of {run.n_samples} "
            "samples scored; the same `evaluate` without --until-decided (and --margin) scores "
            f"the rest, or with --resume {run.id} in their place"
        )
    else:
        state = (
            f"INCOMPLETE: {run.n_done} of {run.n_samples} samples scored; re-run the same "
            f"command (or add --resume {run.id}) to finish it"
        )
    lines = [
        f"run:            {info.run_id}",
        f"status:         {state}",
        f"created:        {info.created}",
        f"dataset:        {printable(info.dataset or '-')} (sha256 {info.dataset_sha256}, "
        f"{run.n_samples} samples)",
    ]
    for role, model in (("judge", info.judge), ("embedder", info.embedder)):
        if model is not None:
            sha = f" (sha256 {model['sha256']})" if model.get("sha256") else ""
            lines.append(f"{role + ':':<16}{printable(model['name'])}{sha}")
    lines.append(f"prompt version: {info.prompt_version or 'none (no metric asked a judge)'}")
    lines.append(f"metrics:        {', '.join(info.metrics)}")
    settings = {m: s for m, s in info.metric_settings.items() if s}
    if settings:
        lines.append(
            "settings:       "
            + "; ".join(
                f"{m}: " + ", ".join(f"{k}={v}" for k, v in s.items()) for m, s in settings.items()
            )
        )
    # runs recorded before only their own metrics' thresholds were kept list every default
    thresholds = ", ".join(f"{m} {v:.2f}" for m, v in run.thresholds.items() if m in info.metrics)
    lines.append(f"thresholds:     {thresholds or '-'}")
    if (decision := decision_line(info.until_decided, run.n_done)) is not None:
        lines.append(f"comparison:     {decision}")
    if (cost := cost_line(info.until_decided)) is not None:
        lines.append(f"its cost:       {cost}")
    return "\n".join(lines)


def _change_rows(changes: Sequence[MetricChange], title: str | None = None) -> list[str]:
    width = max([len("metric"), *(len(c.metric) for c in changes)])
    lines = [title] if title else []
    lines.append(
        f"{'metric':<{width}}  {'base':>6}  {'new':>6}  {'change':>7}  "
        f"{'95% CI of change':>18}  {'n':>5}  verdict"
    )
    for c in changes:
        lines.append(
            f"{c.metric:<{width}}  {_number(c.base_mean):>6}  {_number(c.new_mean):>6}  "
            f"{_signed(c.change):>7}  {interval(c.ci95):>18}  {c.n_paired:>5}  {c.verdict}"
        )
    return lines


def _side(label: str, run: dict[str, object]) -> str:
    described = f"run {run.get('id')} ({run.get('created')})"
    return described if label == run.get("id") else f"{label}: {described}"


def comparison_text(comparison: Comparison) -> str:
    """The whole comparison: header, warnings, per metric, per category, the movers."""
    base, new = comparison.base, comparison.new
    lines = [
        f"{role} {_side(side.label, side.run)}" for role, side in (("BASE", base), ("NEW ", new))
    ]
    lines += [f"Warning: {w}." for w in comparison.warnings]
    lines.append(
        f"Paired by sample_id: {comparison.n_shared} samples in both runs, "
        f"{comparison.n_new_only} added (only in NEW), {comparison.n_base_only} removed "
        "(only in BASE, not compared)."
    )
    if comparison.not_compared:
        lines.append(f"Not in both runs, not compared: {', '.join(comparison.not_compared)}.")
    lines.append("")
    lines += _change_rows(comparison.metrics)
    lines += corrected_change_lines(comparison.metrics)
    for category, changes in comparison.by_category.items():
        lines.append("")
        lines += _change_rows(changes, title=f"category: {printable(category)}")
    if not comparison.top:
        return "\n".join(lines)
    lines.append("")
    if not comparison.movers:
        lines.append("No sample's score changed.")
    else:
        lines.append("Samples that changed most:")
        for mover in comparison.movers:
            lines.append(
                f"  {printable(mover.metric)}  {printable(mover.sample_id)}: "
                f"{_number(mover.base)} -> "
                f"{_number(mover.new)}" + (f" ({_signed(mover.change)})" if mover.change else "")
            )
            lines += [f"      {printable(line)}" for line in mover.evidence]
    return "\n".join(lines)


def corrected_change_lines(changes: list[MetricChange]) -> list[str]:
    """The changes people would see, where both runs have enough samples labelled at
    random in common; else a line saying the changes above are the judge's."""
    found = [c for c in changes if c.corrected is not None]
    if not found:
        most = max((c.n_labelled_in_both for c in changes), default=0)
        return [
            "",
            f"These changes are the judge's: the runs have {most} samples labelled at random "
            f"in common ({MIN_LABELLED} give the change people would see).",
        ]
    lines = ["", "Corrected by people's labels (paired, on the samples both runs labelled):"]
    for change in found:
        c = change.corrected
        assert c is not None
        judge = f"{_signed(change.change)}" if change.change is not None else "-"
        lines.append(
            f"  {printable(change.metric)}: {_signed(c.mean)} [{_signed(c.ci95[0])}, "
            f"{_signed(c.ci95[1])}] from {c.n_labelled} samples labelled in both runs "
            f"(the judge's change {judge})"
        )
    return lines


def regression_text(comparison: Comparison, max_drop: float) -> str:
    """The regression gate's verdict, naming each metric that failed it."""
    failed = comparison.regressions(max_drop)
    lines = [
        f"Regression gate (fails on a drop of more than {max_drop:g} whose 95% CI excludes 0):"
    ]
    if not failed:
        lines.append("  PASS  no metric is worse beyond the tolerance")
    for change in failed:
        lines.append(
            f"  FAIL  {change.metric} dropped by {-(change.change or 0.0):.3f} "
            f"({_number(change.base_mean)} -> {_number(change.new_mean)}, 95% CI of the change "
            f"{interval(change.ci95)})"
        )
    return "\n".join(lines)


def _gate_source(gate: GateResult, corrected: Mapping[str, CorrectedSummary]) -> str:
    """Which mean a gate read, in words."""
    entry = corrected.get(gate.metric)
    if gate.reads == CORRECTED and gate.interval is not None and entry is not None:
        return f"the mean corrected by {entry.n_labelled} labelled samples"
    if gate.needed:
        return f"no corrected mean yet (--gate-on corrected): label {gate.needed} more samples"
    if entry is None:
        return "its scores' mean (no labels make this metric)"
    if gate.gate_on == JUDGE:
        return "the judge's mean (--gate-on judge)"
    return f"the judge's mean (label {entry.needed} more samples for the corrected one)"


def gates_read_again(
    now: Sequence[GateResult],
    recorded: Sequence[GateResult],
    corrected: Mapping[str, CorrectedSummary],
) -> str:
    """What each gate of `runs show` read, with the labels as they are now, and the gates
    whose outcome differs from the one recorded when the run was evaluated."""
    before = {gate.metric: gate for gate in recorded}
    lines = ["Gates read again with the labels as they are now, each from:"]
    for gate in now:
        line = f"  {printable(gate.metric)}: {_gate_source(gate, corrected)}"
        old = before.get(gate.metric)
        if old is not None and old.passed != gate.passed:
            verdict = "PASS" if old.passed else "FAIL"
            line += f"; recorded {verdict} when evaluated ({_number(old.value)}, {old.reads})"
        lines.append(line)
    return "\n".join(lines)


def label_notes(
    made: Mapping[str, MetricLabels], run_id: str, shown: int = 5, db: Location | None = None
) -> list[str]:
    """What a run's labels leave out of its corrected means, one line per kind and metric:
    samples with some verdicts unlabelled (which ones), and verdicts whose reviewers
    disagree (kept; their mean counts)."""
    notes = []
    for metric, entry in made.items():
        if entry.missing:
            listed = [
                f"{printable(sample)} (verdict{'s' * (len(found) > 1)} "
                f"{', '.join(str(n) for n in found)})"
                for sample, found in list(entry.missing.items())[:shown]
            ]
            more = ", ..." if len(entry.missing) > shown else ""
            samples = counted(len(entry.missing), "sample")
            have = "has" if len(entry.missing) == 1 else "have"
            notes.append(
                f"{metric}: {samples} {have} verdicts still unlabelled, "
                f"not counted for the mean corrected by labels until each is complete: "
                f"{', '.join(listed)}{more} (`localeval review {run_id}{db_words(db)}` marks them)"
            )
        if entry.disagreements:
            disagreeing = counted(entry.disagreements, "verdict")
            notes.append(
                f"{metric}: reviewers disagree on {disagreeing}; every label is kept, and their "
                "mean counts as people's verdict"
            )
    return notes
