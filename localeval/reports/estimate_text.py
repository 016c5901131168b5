"""An estimate as the terminal shows it: per part, the judge's calls and tokens and the time."""

from __future__ import annotations

from localeval.estimate.counting import Estimate
from localeval.estimate.division import Division
from localeval.judge import Usage
from localeval.text import printable


def duration(seconds: float) -> str:
    """ "2h05m", "3m07s", "12s"."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def estimate_text(estimate: Estimate) -> str:
    """The table of parts (metrics) and total, then the speeds it used and the notes."""
    return "\n".join(usage_table(estimate) + closing_lines(estimate, estimate.counting_seconds))


def bounds_text(fewest: Estimate, most: Estimate, headings: tuple[str, str]) -> str:
    """Two estimates of one piece of work, the least and the most it can take (`generate`:
    every candidate passing, every one failing), each under its heading, then the speeds."""
    lines = [headings[0], *usage_table(fewest), "", headings[1], *usage_table(most)]
    counting = fewest.counting_seconds + most.counting_seconds
    return "\n".join(lines + closing_lines(most, counting))


def usage_table(estimate: Estimate) -> list[str]:
    """Per part: judge calls, cached, prompt tokens, generated, time; loading; total."""
    part = estimate.part
    names = {name: printable(name) for name in estimate.parts}
    width = max([len(part), len("loading the models"), *(len(n) for n in names.values())])
    header = ("judge calls", "cached", "prompt tokens", "generated", "time")
    lines = [f"{part:<{width}}  " + "  ".join(f"{h:>11}" for h in header)]

    def row(label: str, usage: Usage | None, seconds: float) -> str:
        counts = ["", "", "", ""]
        if usage is not None:
            counts = [
                f"{usage.judge_calls:,}",
                f"{usage.cached_calls:,}",
                f"{usage.prompt_tokens:,}",
                f"{usage.generated_tokens:,}",
            ]
        time = duration(seconds) if estimate.timed else "?"
        return f"{label:<{width}}  " + "  ".join(f"{c:>11}" for c in [*counts, time])

    for name, usage in estimate.parts.items():
        lines.append(row(names[name], usage, usage.seconds))
    if estimate.loading:
        lines.append(row("loading the models", None, sum(estimate.loading.values())))
    lines.append(row("total", estimate.usage, estimate.usage.seconds))
    return lines


def closing_lines(estimate: Estimate, counting_seconds: float) -> list[str]:
    """The speeds the time rests on, the notes, and what was counted in how long."""
    lines = speed_lines(estimate) + states_lines(estimate)
    lines += [f"Note: {note}" for note in estimate.notes]
    lines.append(
        f"Counted in {counting_seconds:.1f} s from {estimate.n_items} "
        f"{estimate.item}{'' if estimate.n_items == 1 else 's'}; nothing was evaluated."
    )
    return lines


def states_lines(estimate: Estimate) -> list[str]:
    """How many items read their contexts from kept states (their tokens not counted)."""
    if not estimate.from_states:
        return []
    return [
        f"{estimate.from_states:,} of {estimate.n_items:,} {estimate.item}s read their "
        f"contexts from kept states: {estimate.restored_tokens:,} prompt tokens not read "
        "again (not in the table)."
    ]


def speed_lines(estimate: Estimate) -> list[str]:
    """What the time rests on: each model's speed on this machine, or that it is unknown."""
    pricing, lines = estimate.pricing, []
    judge, embedder = pricing.judge, pricing.embedder
    if judge is not None:
        lines.append(
            f"Judge {estimate.judge} on this machine: {judge.prompt_tokens_per_s:.0f} prompt "
            f"tokens/s, {judge.generated_tokens_per_s:.1f} generated tokens/s, "
            f"{judge.step_seconds:.3f} s a step, {judge.load_seconds:.1f} s to load"
            + (f"; {pricing.concurrency} samples in flight" if pricing.concurrency > 1 else "")
        )
    if embedder is not None:
        lines.append(
            f"Embedder {estimate.embedder} on this machine: {embedder.texts_per_s:.0f} texts/s "
            f"({estimate.embedded:,} to embed), {embedder.load_seconds:.1f} s to load"
        )
    if not estimate.timed:
        lines.append("Time: unknown (a model's speed on this machine could not be measured)")
    return lines


def division_text(division: Division) -> str:
    """How the cluster's actors would divide the estimated run."""
    plan = division.plan
    counts = [n for n, _ in division.per_actor]
    seconds = [s for n, s in division.per_actor if n]
    sent = sum(counts)
    lines = [
        "",
        f"On Ray: {plan}",
        f"  samples sent to the actors: {sent} ({division.here} answered from the cache "
        "or without a model here)",
    ]
    if not division.timed:
        lines.append("  (the models' speeds are not known: how the time divides cannot be said)")
    elif seconds:
        fewest, most = min(counts), max(counts)
        share = f"{fewest}" if fewest == most else f"{fewest} to {most}"
        lines.append(
            f"  each actor: {share} samples, {duration(min(seconds))} to "
            f"{duration(max(seconds))} with its models' loading"
        )
        lines.append(f"  the run: about {duration(division.seconds)} on the cluster")
        if division.slower != 1.0:
            lines.append(
                f"  (an actor's judge taken as {division.slower:.3g}× as slow as this "
                f"machine's, for its {plan.threads} thread(s): each node's cores are taken to "
                "be as fast as this machine's)"
            )
    return "\n".join(lines)
