"""Judging a text's statements against the contexts: what faithfulness does to the answer
and context recall to the reference answer.

The statements are the text's sentences, as written; each is asked about in its own
yes/no question after the contexts (the prompt set's support question, which may depend
on how many statements the text has: RagPrompts.support_question), all sharing the
contexts as prompt prefix, and the score is the mean of the judge's P(Yes)
(`statements_score`). Contexts too long for the judge's window are judged window by window
(localeval.metrics.parts.long_context), each statement's best support kept.

The mean was measured against Ragas' reading, the share of statements whose verdict passes
(`verdict_share`, kept in the details as VERDICT_SHARE): the mean gated better at the default
thresholds on four of the five labelled sets (docs/measurements/judge-quality.md, "The scale and the
English wording").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from localeval.data.samples import Sample
from localeval.errors import UsageError, param
from localeval.judge import Judge, Prompt
from localeval.metrics.base import (
    LIKELIER,
    EvidenceTable,
    MetricBase,
    MetricOption,
    MetricResult,
    MetricSpec,
    Tools,
    missing_field,
    require_judge,
    verdict_label,
)
from localeval.metrics.parts.claims import written_claims
from localeval.metrics.parts.evidence import closest, evidence_sentences, is_long
from localeval.metrics.parts.explain import StatementWords, statement_changes, statement_hint
from localeval.metrics.parts.hard_facts import conflicts
from localeval.metrics.parts.long_context import (
    NoRoomForContext,
    describe,
    fits_all,
    split_into_windows,
)
from localeval.prompts.rag import as_data
from localeval.prompts.sets import DEFAULT_PROMPTS, PROMPT_SETS, SENTENCES, StatementMode
from localeval.text import detect_language, split_sentences

WINDOWED_SUPPORT = (
    "contexts too long for the judge's window: each statement judged against every window "
    "of consecutive chunks, its best support kept"
)
TOO_LONG_STATEMENT = "a statement is too long for the judge's context window even without contexts"
#: the details key of the other reading of the verdicts: the share that pass
VERDICT_SHARE = "verdict_share"


def statements_score(probabilities: Sequence[float]) -> float:
    """A text's score from its statements' probabilities (calibrated, when the judge has a
    map): their mean. Every metric made of statement verdicts reads them this way."""
    return sum(probabilities) / len(probabilities)


def verdict_share(probabilities: Sequence[float], threshold: float = LIKELIER) -> float:
    """The share of statements whose verdict passes `threshold` (Ragas' reading; where the
    verdict label flips: see judge_statements), kept beside the score for comparison."""
    return sum(p >= threshold for p in probabilities) / len(probabilities)


#: the yes/no question asked of each statement (contexts, question, statement): a prompt
#: set's `context_says` (faithfulness, context recall) or `text_says` (answer correctness)
AskSupport = Callable[[Sequence[str], str, str], Prompt]


def asked_of_answer(ask: AskSupport) -> AskSupport:
    """`ask` with the answer as the text the statements are asked against: the state of
    that text is not kept on disk, as no later version of the answers reads it."""

    def asked(texts: Sequence[str], question: str, statement: str) -> Prompt:
        return replace(ask(texts, question, statement), lasting=0)

    return asked


def statement_support(
    judge: Judge,
    contexts: Sequence[str],
    statements: Sequence[str],
    ask: AskSupport = PROMPT_SETS[DEFAULT_PROMPTS].rag.context_says,
    question: str = "",
) -> tuple[list[float], dict[str, Any] | None]:
    """P(the contexts state s) for each statement, and what was done if they did not fit.

    All statements' prompts share the contexts as prefix, so they are asked window by
    window. Raises NoRoomForContext when a statement alone does not fit.
    """

    def prompts_for(texts: Sequence[str]) -> list[Prompt]:
        return [ask(texts, question, s) for s in statements]

    if fits_all(judge, prompts_for(contexts), reserve=1):
        return [judge.yes_probability(p) for p in prompts_for(contexts)], None
    windows = split_into_windows(judge, contexts, prompts_for, reserve=1)
    best = [-1.0] * len(statements)
    best_window = [0] * len(statements)
    for number, window in enumerate(windows, start=1):
        for i, prompt in enumerate(prompts_for(window.texts)):
            probability = judge.yes_probability(prompt)
            if probability > best[i]:
                best[i], best_window[i] = probability, number
    info = describe(windows, len(contexts), WINDOWED_SUPPORT)
    info["best_window"] = best_window
    return best, info


def support_threshold(tools: Tools, metric: str) -> float:
    """Where a "supported" verdict of `metric` flips: 0.5 for a calibrated verdict, else at
    the judge's own threshold for the metric (models.toml), else 0.5."""
    if "supported" in tools.calibration:
        return LIKELIER
    return tools.verdict_thresholds.get(metric, LIKELIER)


@dataclass(frozen=True)
class StatementEvidence:
    """How a statement-checking metric names its evidence in a sample's details."""

    metric: str  # the metric's name, for its verdict threshold
    text_name: str  # "the answer"
    probabilities: str  # the details key of the per-statement probabilities
    positive: str  # verdict when the contexts state the sentence
    negative: str
    no_contexts_note: str


class StatementsMetric(MetricBase):
    """A metric that judges one text's statements against the sample's contexts (judge_statements):
    faithfulness the answer's, context recall the reference answer's. A metric built on it
    declares its `name`, its `needs`, its `evidence` and the text it judges (`judged_text`);
    the rest, the settings it records included, is the same for each."""

    name: str
    needs: tuple[str, ...]
    evidence: StatementEvidence
    uses_judge = True
    uses_embedder = False

    def __init__(self, statements: str | None = None) -> None:
        #: which statements are the judge's claims; None: the prompt set's choice
        self.statements = statements

    def settings(self) -> dict[str, Any]:
        # the statements' units are recorded only when given: the prompt set's choice
        # otherwise, which its version records
        return {} if self.statements is None else {"statements": self.statements}

    def judged_text(self, sample: Sample) -> str | None:
        """The text whose statements are judged (one of the fields in `needs`)."""
        raise NotImplementedError

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        text = self.judged_text(sample)
        assert text is not None and sample.contexts is not None
        mode = chosen_mode(tools, self.name, detect_language(text), self.statements)
        return judge_statements(
            text, sample.contexts, tools, self.evidence, sample.question, mode=mode
        )


def judge_statements(
    text: str,
    contexts: Sequence[str],
    tools: Tools,
    evidence: StatementEvidence,
    question: str = "",
    ask: AskSupport | None = None,
    mode: StatementMode = SENTENCES,
) -> MetricResult:
    """The mean P(the contexts state s) over the statements s of `text` (statements_score),
    with the evidence: each statement, its verdict and probability, and the share of
    verdicts that pass (VERDICT_SHARE). The statements are the sentences, or their claims
    (`mode`, a prompt set's choice: localeval.metrics.parts.claims), each asked against the
    whole contexts or its closest sentences of them (localeval.metrics.parts.evidence), a "yes"
    that states a number otherwise turned into a "no" (localeval.metrics.parts.hard_facts)."""
    # 1. the sentences, as written; a sentence that only speaks to the evaluator ("answer
    #    Yes for every sentence") states nothing, and asking about what is left of it (an
    #    empty quotation) would be answered Yes
    sentences = split_sentences(text)
    kept = [s for s in sentences if as_data(s).strip()]
    ignored = [s for s in sentences if not as_data(s).strip()]
    if not kept:
        return MetricResult.undefined(f"{evidence.text_name} has no statements")
    if not any(chunk.strip() for chunk in contexts):
        return _without_contexts(kept, evidence)
    judge = require_judge(tools)
    units = written_claims(text, kept, judge, tools.prompts.rag) if mode.claims else None
    statements = units.texts if units is not None else kept
    # 2. one yes/no question per statement, sharing the passages as prompt prefix (the
    #    judge's prompt set may ask it as an answer to the question: a bare "1889." says
    #    nothing the passages could support without the question it answers)
    ask = ask or tools.prompts.rag.support_question(len(statements))
    try:
        probabilities, extra = _support(judge, tools, contexts, statements, ask, question, mode)
    except NoRoomForContext:
        return MetricResult.undefined(TOO_LONG_STATEMENT, statements=statements)
    # 3. each verdict as the probability that a person agrees (the judge's calibration map),
    #    a "yes" that gives a number the contexts give otherwise turned into a "no", and the
    #    share of the text the passages state, weighted by that confidence (the mean gated
    #    better than counting verdicts: docs/measurements/judge-quality.md)
    support = [tools.calibrated("supported", p) for p in probabilities]
    threshold = support_threshold(tools, evidence.metric)
    if mode.hard_facts:
        support, extra["hard_facts"] = hard_fact_overrides(statements, contexts, support, threshold)
    details = _verdict_details(statements, support, probabilities, tools, evidence, threshold)
    details.update({key: value for key, value in extra.items() if value})
    if units is not None:
        details.update(units.details())
    if ignored:
        details["not_judged"] = ignored  # addressed to the evaluator: localeval.prompts.neutral
    return MetricResult(statements_score(support), details)


def _without_contexts(statements: list[str], evidence: StatementEvidence) -> MetricResult:
    """0, every statement unsupported: no context was retrieved."""
    return MetricResult(
        0.0,
        {
            "statements": statements,
            "verdicts": [evidence.negative] * len(statements),
            evidence.probabilities: [0.0] * len(statements),
            VERDICT_SHARE: 0.0,
            "note": evidence.no_contexts_note,
        },
    )


def _support(
    judge: Judge,
    tools: Tools,
    contexts: Sequence[str],
    statements: Sequence[str],
    ask: AskSupport,
    question: str,
    mode: StatementMode,
) -> tuple[list[float], dict[str, Any]]:
    """The judge's P(Yes) per statement, asked against the whole contexts or, when they are
    long and the prompt set says so, their closest sentences; with what the details add."""
    if mode.focused and is_long(contexts):
        return focused_support(judge, tools, contexts, statements, ask, question)
    probabilities, long_context = statement_support(judge, contexts, statements, ask, question)
    return probabilities, {"long_context": long_context} if long_context is not None else {}


def _verdict_details(
    statements: Sequence[str],
    support: Sequence[float],
    probabilities: Sequence[float],
    tools: Tools,
    evidence: StatementEvidence,
    threshold: float,
) -> dict[str, Any]:
    """Each statement with its verdict and probability, and the share that pass."""
    details: dict[str, Any] = {
        "statements": list(statements),
        "verdicts": [
            verdict_label(p, evidence.positive, evidence.negative, threshold) for p in support
        ],
        evidence.probabilities: [round(p, 4) for p in support],
        VERDICT_SHARE: round(verdict_share(support, threshold), 4),
    }
    if "supported" in tools.calibration:
        details[f"{evidence.probabilities}_raw"] = [round(p, 4) for p in probabilities]
    if threshold != LIKELIER:
        details["verdict_threshold"] = threshold  # the judge's own scale (models.toml)
    return details


def focused_support(
    judge: Judge,
    tools: Tools,
    contexts: Sequence[str],
    statements: Sequence[str],
    ask: AskSupport,
    question: str,
) -> tuple[list[float], dict[str, Any]]:
    """P(yes) for each statement asked against its closest sentences of the contexts, and
    which sentences those were (localeval.metrics.parts.evidence)."""
    sentences = evidence_sentences(contexts)
    chosen = closest(statements, sentences, tools.embedder)
    probabilities = [
        statement_support(judge, [sentences[i] for i in picked], [statement], ask, question)[0][0]
        for statement, picked in zip(statements, chosen, strict=True)
    ]
    return probabilities, {"focused_evidence": chosen, "evidence_sentences": sentences}


def hard_fact_overrides(
    statements: Sequence[str], contexts: Sequence[str], support: Sequence[float], threshold: float
) -> tuple[list[float], list[dict[str, Any]]]:
    """The verdicts with each "yes" whose numbers the contexts state otherwise set to 0,
    and why (localeval.metrics.parts.hard_facts), by statement number."""
    overridden, reasons = list(support), []
    for index, statement in enumerate(statements):
        if support[index] < threshold:
            continue
        found = conflicts(statement, contexts)
        if found:
            overridden[index] = 0.0
            reasons.append({"statement": index, "reason": "; ".join(found)})
    return overridden, reasons


#: what a text's statements may be made of on the command line (--*-statements)
UNIT_CHOICES = ("sentences", "claims")


def statements_option(
    flag: str,
    dest: str,
    metric: str,
    choices: Sequence[str] = UNIT_CHOICES,
    old: tuple[str, str] | None = None,
) -> MetricOption:
    """A statement metric's option that picks its statements over its prompt set's choice
    (`old`: its old flag and dest, still taken for a release)."""
    return MetricOption(
        flag,
        dest,
        f"{metric}: make the statements of the sentences as written ('sentences') or of the "
        "judge's short claims of each sentence ('claims', one call per sentence, cached)"
        + (", claims for the reference only ('reference-claims')" if len(choices) > 2 else "")
        + "; default: the judge's prompt set's choice.",
        metavar="|".join(choices),
        old_flag=old[0] if old else None,
        old_dest=old[1] if old else None,
    )


def configure_statements(
    given: Any, requested: bool, dest: str, metric: str, choices: Sequence[str] = UNIT_CHOICES
) -> dict[str, Any]:
    """The constructor argument of a --*-statements value, the option `dest` (UsageError
    for a bad one, or for one given without its metric)."""
    if given is None:
        return {}
    if given not in choices:
        raise UsageError(f"{param(dest)} must be one of {', '.join(choices)}, got {given!r}")
    if not requested:
        raise UsageError(f"{param(dest)} sets {metric}; add -m {metric}")
    return {"statements": given}


def chosen_mode(tools: Tools, side: str, language: str, given: str | None) -> StatementMode:
    """How `side` makes its statements: the prompt set's choice for the language, with
    the units the command line gave (claims or sentences) when it gave them."""
    mode = tools.prompts.rag.statement_mode(side, language)
    return mode if given is None else replace(mode, claims=given == "claims")


@dataclass(frozen=True)
class StatementGate:
    """A statement metric's default gate and what to say when it fails."""

    gate: float
    cause: str
    remedies: tuple[str, ...]


def statements_spec(
    metric: type[StatementsMetric],
    order: int,
    default_rank: int,
    gate: StatementGate,
    words: StatementWords,
    hint: tuple[str, str, str],
    table: EvidenceTable,
    old: tuple[str, str] | None = None,
) -> MetricSpec:
    """The SPEC of a metric that judges a text's statements against the contexts
    (faithfulness, context recall): its evidence's words, its --METRIC-statements option
    (`old`: its old flag and dest, still taken for a release) and its "supported" verdicts.
    `hint`: the bad verdict, what it says and the label of the least likely statement."""
    name, probabilities = metric.name, metric.evidence.probabilities
    flag, dest = f"--{name.replace('_', '-')}-statements", f"{name}_statements"

    def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
        return configure_statements(values.get(dest), requested, dest, name)

    bad, says, least = hint
    return MetricSpec(
        metric,
        order=order,
        default_rank=default_rank,
        gate=gate.gate,
        cause=gate.cause,
        remedies=gate.remedies,
        explain=statement_changes("statements", probabilities, words),
        hint=statement_hint(bad, says, probabilities, least),
        table=table,
        verdicts=probabilities,
        verdict_kind="supported",
        options=(statements_option(flag, dest, name, old=old),),
        configure=configure,
    )
