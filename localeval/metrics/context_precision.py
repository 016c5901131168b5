"""Context precision: whether the useful chunks are ranked above the noise.

Inputs: question, contexts, and reference_answer (preferred) or answer.
Output: with v_k the usefulness of chunk k for reaching the reference (else the answer),
precision@k = sum(v_1..v_k) / k and score = sum_k precision@k * v_k / sum_k v_k; 0 when
no chunk is useful. In [0, 1].

A chunk's usefulness comes, per sample language (of the question), from one of two
sources (`usefulness`, default DEFAULT_USEFULNESS, chosen by measurement in
docs/measurements/judge-quality.md; `--cp-usefulness` overrides it):
* "embedder": how close its meaning is to the target's: the cosine similarity (clipped at
  0) of the mean of its sentences' embeddings and the mean of the target's. No judge
  call; averaging sentences avoids the embedder's truncation of long chunks. Good where
  the embedder reads the language (English for the default one).
* "judge": the judge's P(Yes) that the chunk, read alone, is useful for reaching the
  target as the answer to the question (one short yes/no question per chunk; a chunk too
  long for the judge's window is judged on its beginning), through the judge's "useful"
  calibration map when it has one (the raw P(Yes) then in "usefulness_raw").
Details: which source decided ("usefulness_by") and the sample's language, per-chunk
verdicts ("useful" when v_k >= 0.5) and usefulness, and which answer the chunks were
compared with.
Undefined without contexts (or with an empty list), or with neither reference nor answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from localeval.data.samples import Sample
from localeval.errors import UsageError, param
from localeval.metrics.base import (
    Details,
    Evidence,
    EvidenceTable,
    MetricBase,
    MetricOption,
    MetricResult,
    MetricSpec,
    Note,
    Tools,
    missing_field,
    require_embedder,
    require_judge,
    verdict_label,
)
from localeval.metrics.parts.explain import NOTABLE_SHIFT, pairs
from localeval.metrics.parts.long_context import NoRoomForContext, fit_text
from localeval.prompts.neutral import without_orders
from localeval.text import LANGUAGE_NAMES, LANGUAGES, detect_language, split_sentences

EMBEDDER = "embedder"
JUDGE = "judge"
SOURCES = (EMBEDDER, JUDGE)
USEFULNESS_FLAG = "--context-precision-usefulness"
USEFULNESS = "context_precision_usefulness"
#: per sample language, what measures a chunk's usefulness: the embedder where it separates
#: the labelled chunks better, the judge where it does (docs/measurements/judge-quality.md)
DEFAULT_USEFULNESS: Mapping[str, str] = {"en": EMBEDDER, "zh": JUDGE}
#: the kind of verdict the judge gives about a chunk (its calibration map's name)
USEFUL = "useful"


def average_precision(useful: Sequence[float]) -> float:
    """Rank-weighted precision of (possibly fractional) usefulness verdicts, in rank order."""
    total = sum(useful)
    if total <= 0:
        return 0.0
    running = 0.0
    weighted = 0.0
    for k, v in enumerate(useful, start=1):
        running += v
        weighted += (running / k) * v
    return weighted / total


def meaning_vectors(texts: Sequence[str], tools: Tools) -> np.ndarray:
    """One unit vector per text: the mean of its sentences' embeddings, one batch for all."""
    embedder = require_embedder(tools)
    pieces = [split_sentences(t) or [t] for t in texts]
    flat = [sentence for sentences in pieces for sentence in sentences]
    vectors = embedder.embed(flat)
    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float64)
    start = 0
    for i, sentences in enumerate(pieces):
        mean = vectors[start : start + len(sentences)].mean(axis=0)
        start += len(sentences)
        norm = float(np.linalg.norm(mean))
        out[i] = mean / norm if norm else mean
    return out


def embedded_usefulness(target: str, chunks: Sequence[str], tools: Tools) -> list[float]:
    """Each chunk's closeness of meaning to the target (an empty chunk: 0, not embedded)."""
    filled = [i for i, chunk in enumerate(chunks) if chunk.strip()]
    # a chunk is compared without what speaks to the evaluator: an order appended to it
    # would move its meaning, and so its rank's weight
    texts = [without_orders(chunks[i]) or chunks[i] for i in filled]
    vectors = meaning_vectors([target, *texts], tools)
    useful = [0.0] * len(chunks)
    for row, i in enumerate(filled, start=1):
        # within [0, 1]: float32 rounding puts identical texts at 1.00000007
        useful[i] = min(1.0, max(0.0, float(vectors[0] @ vectors[row])))
    return useful


def judged_usefulness(
    question: str, target: str, chunks: Sequence[str], language: str, tools: Tools
) -> tuple[list[float], list[int]]:
    """The judge's P(chunk k is useful for reaching the target), chunk by chunk (an empty
    chunk: 0, not asked), and which chunks were judged on their beginning only.

    Raises NoRoomForContext when the question and target leave no room for a chunk."""
    judge, ask = require_judge(tools), tools.prompts.rag.chunk_useful
    useful = [0.0] * len(chunks)
    cut: list[int] = []
    # the last chunk first: chunk 1's prompt, asked last, begins as the next metric's
    # prompts do (the contexts from chunk 1), so the judge keeps chunk 1 evaluated for them
    for i in reversed(range(len(chunks))):
        chunk = chunks[i]
        if not chunk.strip():
            continue
        text = fit_text(judge, chunk, lambda t: ask(t, question, target, language), reserve=1)
        if text != chunk:
            cut.insert(0, i + 1)
        useful[i] = judge.yes_probability(ask(text, question, target, language))
    return useful, cut


def describe_usefulness(usefulness: Mapping[str, str]) -> str:
    """The setting as one plain value, as runs record it: "en=embedder zh=judge"."""
    return " ".join(f"{language}={usefulness[language]}" for language in sorted(usefulness))


class ContextPrecision(MetricBase):
    name = "context_precision"
    needs = ("question", "contexts")

    def __init__(self, usefulness: Mapping[str, str] | None = None):
        by_language = {**DEFAULT_USEFULNESS, **(usefulness or {})}
        self._by_language = by_language
        #: the setting, as runs record it (a run with another one is another evaluation)
        self.usefulness = describe_usefulness(by_language)

    @property
    def uses_judge(self) -> bool:  # type: ignore[override]
        """Whether any language's chunks are judged (read on the class: it may)."""
        return JUDGE in self._by_language.values()

    @property
    def uses_embedder(self) -> bool:  # type: ignore[override]
        """Whether any language's chunks are embedded (read on the class: it may)."""
        return EMBEDDER in self._by_language.values()

    def source_for(self, language: str) -> str:
        """What measures chunk usefulness for samples in `language` ("embedder", "judge")."""
        return self._by_language.get(language, EMBEDDER)

    def fields_read(self, sample: Sample) -> tuple[str, ...]:
        """The chunks are judged against the reference, or the answer when it has none."""
        if sample.reference_answer and sample.reference_answer.strip():
            return (*self.needs, "reference_answer")
        return (*self.needs, "reference_answer", "answer")

    def embeds_in(self, language: str) -> bool:
        """Whether samples in `language` are embedded (the run's embedder language check)."""
        return self.source_for(language) == EMBEDDER

    def score(self, sample: Sample, tools: Tools) -> MetricResult:
        if reason := missing_field(sample, self.needs):
            return MetricResult.undefined(reason)
        assert sample.contexts is not None
        if not sample.contexts:
            return MetricResult.undefined("no contexts")
        # 1. what a useful chunk helps to reach: the reference when there is one
        if sample.reference_answer and sample.reference_answer.strip():
            target, against = sample.reference_answer, "reference_answer"
        elif sample.answer and sample.answer.strip():
            target, against = sample.answer, "answer"
        else:
            return MetricResult.undefined("no reference_answer or answer to judge chunks against")
        # 2. each chunk's usefulness, from the source set for the sample's language; an
        #    empty chunk is useless without asking
        language = detect_language(sample.question)
        source = self.source_for(language)
        details: dict[str, Any] = {"judged_against": against}
        if source == JUDGE:
            try:
                raw, cut = judged_usefulness(
                    sample.question, target, sample.contexts, language, tools
                )
            except NoRoomForContext:
                return MetricResult.undefined(
                    f"the question and {against} are too long for the judge's context window"
                )
            # each verdict as the probability that a person agrees, when the judge has a map
            useful = [tools.calibrated(USEFUL, p) for p in raw]
            if USEFUL in tools.calibration:
                details["usefulness_raw"] = [round(p, 4) for p in raw]
            if cut:
                details["long_context"] = {
                    "rule": "chunks too long for the judge's window: their beginning judged",
                    "chunks": cut,
                }
        else:
            useful = embedded_usefulness(target, sample.contexts, tools)
        # 3. average precision over the ranks, weighted by usefulness
        details.update(
            usefulness_by=source,
            language=language,
            verdicts=[verdict_label(v, "useful", "not useful") for v in useful],
            usefulness=[round(v, 4) for v in useful],
        )
        return MetricResult(average_precision(useful), details)


def configure(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    """--context-precision-usefulness [LANGUAGE=]SOURCE, repeatable: a bare SOURCE sets
    every language."""
    given = values.get(USEFULNESS) or ()
    if not given:
        return {}
    if not requested:
        raise UsageError(
            f"{param(USEFULNESS)} sets context_precision's chunk usefulness; add -m "
            "context_precision"
        )
    chosen: dict[str, str] = {}
    for value in given:
        language, given_one, source = value.partition("=")
        languages = [language] if given_one else list(LANGUAGES)
        source = source if given_one else value
        if source not in SOURCES or not set(languages) <= set(LANGUAGES):
            raise UsageError(
                f"{param(USEFULNESS)} takes SOURCE or LANGUAGE=SOURCE (SOURCE: "
                f"{' or '.join(SOURCES)}; LANGUAGE: {' or '.join(LANGUAGES)}), got {value!r}"
            )
        chosen.update(dict.fromkeys(languages, source))
    return {"usefulness": chosen}


def judged_part(settings: Mapping[str, Any]) -> str | None:
    """Which of a run's scores the judge's verdicts make, from the run's setting
    ("en=embedder zh=judge"): the chunks of the languages set to the judge."""
    setting = settings.get("usefulness")
    if not isinstance(setting, str):
        return None  # a run from before the judge could decide: the embedder's alone
    chosen = dict(pair.partition("=")[::2] for pair in setting.split())
    judged = [LANGUAGE_NAMES.get(k, k) for k, source in sorted(chosen.items()) if source == JUDGE]
    if not judged:
        return None
    return f"the chunks of {' and '.join(judged)} samples"


def explain(base: Details | None, new: Details | None) -> list[tuple[float, str]]:
    """Which chunks became useful or irrelevant, what they were judged against and by what."""
    before = [p for _, p in pairs(base, "verdicts", "usefulness")]
    after = [p for _, p in pairs(new, "verdicts", "usefulness")]
    lines: list[tuple[float, str]] = []
    was, now = (d.get("usefulness_by") if d else None for d in (base, new))
    if base and new and was != now:
        lines.append((1.0, f"chunk usefulness from the {now} (before: the {was})"))
    if base and new and base.get("judged_against") != new.get("judged_against"):
        lines.append(
            (
                1.0,
                f"chunks judged against the {new.get('judged_against')} "
                f"(before: the {base.get('judged_against')})",
            )
        )
    if len(before) != len(after):
        lines.append((1.0, f"{len(after)} chunks retrieved (before: {len(before)})"))
    for rank, (q, p) in enumerate(zip(before, after, strict=False), start=1):
        if (q >= 0.5) != (p >= 0.5):
            state = "became useful" if p >= 0.5 else "became irrelevant"
        elif abs(p - q) >= NOTABLE_SHIFT:
            state = "more useful" if p > q else "less useful"
        else:
            continue
        lines.append((abs(p - q), f"chunk {rank} {state} ({q:.2f} -> {p:.2f})"))
    return lines


def hint(details: Details) -> Evidence | None:
    verdicts = details.get("verdicts")
    if isinstance(verdicts, list):
        useless = [str(k) for k, v in enumerate(verdicts, start=1) if v == "not useful"]
        if useless:
            return Evidence(f"chunks not useful: {', '.join(useless)} of {len(verdicts)}")
    return None


_BY = {JUDGE: "by the judge", EMBEDDER: "by closeness of meaning (the embedder)"}


def notes(details: Details) -> list[Note]:
    if "judged_against" not in details:
        return []
    against = details["judged_against"]
    text = "" if against is None else f"Chunks judged useful or not for reaching the {against}"
    by, language = details.get("usefulness_by"), details.get("language")
    if text and isinstance(by, str) and by in _BY:
        text += f" {_BY[by]}"
        if isinstance(language, str) and language in LANGUAGE_NAMES:
            text += f", as set for {LANGUAGE_NAMES[language]} samples"
    text += "." if text else ""
    return [Note(text, consumes=("judged_against", "usefulness_by", "language"))]


SPEC = MetricSpec(
    ContextPrecision,
    order=40,
    default_rank=1,
    gate=0.65,
    cause="useful chunks are ranked low and noise comes first",
    remedies=("smaller chunks", "a reranker"),
    explain=explain,
    hint=hint,
    table=EvidenceTable("chunk", "", "usefulness", "not useful", "contexts"),
    notes=notes,
    options=(
        MetricOption(
            USEFULNESS_FLAG,
            USEFULNESS,
            "context_precision: what measures each chunk's usefulness, 'judge' or "
            "'embedder', for every sample or per language ('zh=judge'); repeat for several. "
            "Default: "
            + ", ".join(f"{k}={v}" for k, v in sorted(DEFAULT_USEFULNESS.items()))
            + ".",
            metavar="[LANGUAGE=]SOURCE",
            multiple=True,
            old_flag="--cp-usefulness",
            old_dest="usefulness_options",
        ),
    ),
    configure=configure,
    # chunk verdicts are on the judge's scale for some languages only: no judge threshold
    judge_gate=False,
    verdict_kind=USEFUL,
    verdicts="usefulness",
    judged_part=judged_part,
    judged_when=("usefulness_by", JUDGE),
)
