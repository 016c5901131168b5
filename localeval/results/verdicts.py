"""Every verdict the judge gave on a sample, read from the sample's stored details through
the metrics' own descriptions (MetricSpec.verdicts, verdict_kind, table), so a new metric's
verdicts appear without code here: a statement supported or not, an answer that addresses
the question or not, a chunk useful or not.

For a statement, the sentence of the texts it was judged against that it most likely rests
on is found by word overlap, each word weighted by how rare it is among those sentences
(docs/usage.md, "Reviewing the judge"): cheap, needs no model, and good enough to point a
reviewer at the right place; None when no sentence shares enough of the statement.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.metrics import spec
from localeval.metrics.base import LIKELIER, MetricSpec
from localeval.metrics.parts.reference_tokens import rouge_tokens
from localeval.text import split_sentences

#: the question each kind of verdict answers, as a reviewer reads it, and what its yes says
QUESTIONS = {"supported": "supported?", "answers": "addresses the question?", "useful": "useful?"}
MEANINGS = {
    "supported": "is supported by the texts it was judged against",
    "answers": "addresses the question",
    "useful": "is useful for reaching the reference answer",
}
#: the share of a statement's (rarity-weighted) words a sentence must hold to be shown
MIN_OVERLAP = 0.3
#: the sample fields a statement may be judged against
SOURCE_FIELDS = ("contexts", "reference_answer", "answer")


@dataclass(frozen=True)
class Verdict:
    """One yes/no verdict of the judge on one sample."""

    metric: str
    #: its place among the metric's verdicts in the sample's details
    index: int
    #: the kind of verdict ("supported", "answers", "useful"): what its calibration map is
    kind: str
    #: what was judged, in words ("answer statement", "chunk", "answer"), and its text
    noun: str
    text: str
    #: the probability as the run scored it (calibrated when the judge had a map) and the
    #: judge's raw P(Yes)
    probability: float
    raw: float
    #: the judge's verdict: yes (supported, addresses, useful) or no
    says_yes: bool
    #: the sentence of the texts judged against that it most likely rests on (statements)
    rests_on: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "index": self.index,
            "kind": self.kind,
            "question": QUESTIONS.get(self.kind, self.kind),
            "noun": self.noun,
            "text": self.text,
            "probability": self.probability,
            "raw": self.raw,
            "says_yes": self.says_yes,
            "rests_on": self.rests_on,
        }


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _texts(found: MetricSpec, details: Mapping[str, Any], sample: Mapping[str, Any]) -> Any:
    """What each verdict judged: the table's items, the sample's chunks, or (one verdict on
    the whole sample) its answer; (noun, list) or None."""
    table = found.table
    if isinstance(details.get(found.verdicts), list) and table is not None:
        if table.items:
            return table.noun, details.get(table.items)
        return table.noun, sample.get("contexts")
    if not isinstance(details.get(found.verdicts), list):
        return "answer", [sample.get("answer")]
    return None


def metric_verdicts(
    metric: str, details: Mapping[str, Any], sample: Mapping[str, Any]
) -> list[Verdict]:
    """The judge's verdicts for one metric of one sample ([] when the judge gave none): those
    of its table, then those of its extra tables (answer correctness' reference statements),
    numbered on from them."""
    found = spec(metric)
    if found is None or not found.verdict_kind or not isinstance(details, Mapping):
        return []
    raw = found.raw_verdicts(details)
    described = _texts(found, details, sample)
    if raw is None or described is None:
        return []
    noun, texts = described
    scored = details.get(found.verdicts)
    values = scored if isinstance(scored, list) else [scored]
    bad = found.table.bad if found.table is not None else ""
    verdicts = _verdicts(
        found, metric, 0, (noun, texts, raw, values), details.get("verdicts"), bad, details, sample
    )
    start = len(raw)
    for table in found.extra_tables:
        more = details.get(f"{table.values}_raw", details.get(table.values))
        shown = details.get(table.values)
        if not isinstance(more, list) or not isinstance(shown, list):
            continue
        items = (table.noun, details.get(table.items), more, shown)
        verdicts += _verdicts(
            found, metric, start, items, details.get(table.verdicts), table.bad, details, sample
        )
        start += len(more)
    return verdicts


def _verdicts(
    found: MetricSpec,
    metric: str,
    start: int,
    items: tuple[str, Any, list[Any], list[Any]],
    labels: Any,
    bad: str,
    details: Mapping[str, Any],
    sample: Mapping[str, Any],
) -> list[Verdict]:
    """One table's verdicts: (noun, texts, raw probabilities, probabilities as scored), their
    verdict labels and the label that says no; numbered from `start`."""
    noun, texts, raw, values = items
    threshold = _number(details.get("verdict_threshold")) or LIKELIER
    sources = _sources(found, sample)
    verdicts = []
    for index, p_raw in enumerate(raw):
        text = texts[index] if isinstance(texts, list) and index < len(texts) else None
        p = _number(values[index]) if index < len(values) else None
        if not isinstance(text, str) or p is None or _number(p_raw) is None:
            continue  # details this reader cannot follow: shown nowhere rather than wrongly
        label = labels[index] if isinstance(labels, list) and index < len(labels) else None
        says_yes = label != bad if bad and isinstance(label, str) else p >= threshold
        rests = None
        if noun not in ("chunk", "answer"):
            rests = rests_on(text, _judged_against(text, sources))
        verdicts.append(
            Verdict(
                metric,
                start + index,
                found.verdict_kind or "",
                noun,
                text,
                p,
                float(p_raw),
                says_yes,
                rests,
            )
        )
    return verdicts


def sample_verdicts(sample: Mapping[str, Any]) -> list[Verdict]:
    """Every verdict of a results.json sample, metric by metric in the run's order."""
    details = sample.get("details")
    if not isinstance(details, Mapping):
        return []
    return [v for metric, d in details.items() for v in metric_verdicts(str(metric), d, sample)]


def _sources(found: MetricSpec, sample: Mapping[str, Any]) -> dict[str, list[str]]:
    """The texts of the fields the metric reads that a statement may come from or be judged
    against, by field."""
    texts: dict[str, list[str]] = {}
    for name in SOURCE_FIELDS:
        value = sample.get(name)
        if name not in found.needs:
            continue
        if isinstance(value, str):
            texts[name] = [value]
        elif isinstance(value, list):
            texts[name] = [v for v in value if isinstance(v, str)]
    return texts


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def _judged_against(statement: str, sources: Mapping[str, list[str]]) -> list[str]:
    """The texts a statement was judged against: every field the metric reads but the one
    the statement was taken from (the answer's statements are checked against the contexts,
    the reference's against the contexts or the answer)."""
    plain = _plain(statement)
    origin = next(
        (
            name
            for name in ("answer", "reference_answer")
            if any(plain in _plain(t) for t in sources.get(name, []))
        ),
        None,
    )
    rest = [t for name, texts in sources.items() if name != origin for t in texts]
    return rest or [t for texts in sources.values() for t in texts]


def rests_on(statement: str, sources: Sequence[str]) -> str | None:
    """The sentence of `sources` that shares most of the statement's words, each word
    weighted by its rarity among those sentences; None below MIN_OVERLAP."""
    sentences = [s for text in sources for s in split_sentences(text)]
    words = set(rouge_tokens(statement))
    if not sentences or not words:
        return None
    bags = [set(rouge_tokens(s)) for s in sentences]
    seen = Counter(word for bag in bags for word in bag)
    weight = {w: math.log((1 + len(bags)) / (1 + seen[w])) + 1 for w in words}
    total = sum(weight.values())
    best, best_share = None, 0.0
    for sentence, bag in zip(sentences, bags, strict=True):
        share = sum(weight[w] for w in words & bag) / total
        if share > best_share:
            best, best_share = sentence, share
    return best if best_share >= MIN_OVERLAP else None
