"""Plain-text summaries for the terminal."""

from __future__ import annotations

from collections.abc import Mapping

from localeval.gates import GateResult
from localeval.judge import Usage
from localeval.stats import MetricSummary


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(summary: MetricSummary) -> str:
    if summary.ci95 is None:
        return "-"
    return f"[{summary.ci95[0]:.3f}, {summary.ci95[1]:.3f}]"


def summary_table(summaries: Mapping[str, MetricSummary], title: str | None = None) -> str:
    """One row per metric: mean, 95% bootstrap interval, n defined, n undefined."""
    width = max([len("metric"), *(len(m) for m in summaries)])
    lines = []
    if title:
        lines.append(title)
    lines.append(f"{'metric':<{width}}  {'mean':>6}  {'95% CI':>16}  {'n':>5}  {'undefined':>9}")
    for metric, s in summaries.items():
        lines.append(
            f"{metric:<{width}}  {_number(s.mean):>6}  {_interval(s):>16}  {s.n:>5}  "
            f"{s.n_undefined:>9}"
        )
    return "\n".join(lines)


def category_tables(by_category: Mapping[str, Mapping[str, MetricSummary]]) -> str:
    """A summary table per category; empty when every sample has the same (or no) category."""
    if len(by_category) < 2:
        return ""
    return "\n\n".join(
        summary_table(summaries, title=f"category: {category}")
        for category, summaries in by_category.items()
    )


def gates_text(gates: list[GateResult]) -> str:
    lines = ["Quality gates:"]
    for gate in gates:
        if gate.passed:
            lines.append(f"  PASS  {gate.metric} = {_number(gate.value)} >= {gate.threshold:.2f}")
        else:
            lines.append(f"  FAIL  {gate.explanation()}")
    return "\n".join(lines)


def usage_text(usage: Usage) -> str:
    return (
        f"judge: {usage.judge_calls} calls ({usage.cached_calls} from cache), "
        f"{usage.prompt_tokens} prompt tokens evaluated, {usage.generated_tokens} generated; "
        f"{usage.seconds:.1f} s"
    )
