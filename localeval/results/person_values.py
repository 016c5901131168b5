"""A person's value of a sample on a metric, from the team's labels of the judge's verdicts:
the score the metric would give if people had given every verdict (docs/reference.md,
"A person's value per sample").

- faithfulness, context recall: the share of the sample's statements people say the
  texts support (the metric's mean, people as the verdicts);
- context precision: the rank-weighted precision of people's chunk usefulness;
- answer relevancy: people's label of the answer's one verdict;
- answer correctness: the F-score of people's verdicts, each side weighted by its
  statements' length as the metric weighs the judge's.

A sample counts for a metric only when every verdict of that metric on it has a label;
several reviewers' labels of one verdict count as their mean. A label of a sample's score
(pass / fail its gate) is not a value on the metric's scale (a pass may be 0.8 or 1.0), so
it makes no person's value; it stays for calibrate.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from localeval.metrics import spec
from localeval.metrics.answer_correctness import DEFAULT_BETA, by_length, f_beta
from localeval.metrics.context_precision import average_precision
from localeval.results.verdicts import Verdict, sample_verdicts

#: how a label's sample was picked: at random (the review page's "label for the estimate"
#: order, an import said to be random), so the corrected estimate may use it; or otherwise
RANDOM = "random"
CHOSEN = "chosen"
SELECTIONS = (RANDOM, CHOSEN)


class Label(Protocol):
    """A reviewer's label of a verdict (localeval.labels.store.Label), as read here."""

    @property
    def sample_id(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def verdict(self) -> int | None: ...
    @property
    def label(self) -> float: ...
    @property
    def selection(self) -> str: ...


#: a person's value from people's verdict values in the metric's order, and its details
ValueOf = Callable[[Sequence[float], Mapping[str, Any]], float]


def _share(values: Sequence[float], details: Mapping[str, Any]) -> float:
    return sum(values) / len(values)


def _ranked(values: Sequence[float], details: Mapping[str, Any]) -> float:
    return average_precision(values)


def _only(values: Sequence[float], details: Mapping[str, Any]) -> float:
    return values[0]


def _f_score(values: Sequence[float], details: Mapping[str, Any]) -> float:
    """The answer's statements first (precision), then the reference's (recall)."""
    answer = details.get("statements") or []
    reference = {
        "statements": details.get("reference_statements") or [],
        "sentences": details.get("reference_sentences"),
        "claim_sentence": details.get("reference_claim_sentence"),
    }
    split = len(answer)
    precision = by_length(values[:split], details)
    recall = by_length(values[split:], reference)
    beta = details.get("beta")
    return f_beta(precision, recall, beta if isinstance(beta, int | float) else DEFAULT_BETA)


#: the metrics a person's value is defined for, and how
PERSON_VALUE: dict[str, ValueOf] = {
    "faithfulness": _share,
    "context_recall": _share,
    "context_precision": _ranked,
    "answer_relevancy": _only,
    "answer_correctness": _f_score,
}


def judged_throughout(metric: str, settings: Mapping[str, Any]) -> bool:
    """Whether the judge's verdicts make the metric's score on every sample of a run with
    these metric settings: context precision's only where its usefulness is the judge's
    for every language (the embedder's scores have no verdicts to label)."""
    found = spec(metric)
    if metric not in PERSON_VALUE or found is None:
        return False
    if found.judged_part is None:
        return True
    own = settings.get(metric)
    setting = own.get("usefulness") if isinstance(own, Mapping) else None
    if not isinstance(setting, str):
        return False
    return {pair.partition("=")[2] for pair in setting.split()} == {"judge"}


@dataclass
class MetricLabels:
    """What the labels of one metric of a run make."""

    metric: str
    #: per sample whose every verdict has a label: people's value, and whether the sample
    #: was picked at random (may count for the estimate)
    values: dict[str, float] = field(default_factory=dict)
    random: set[str] = field(default_factory=set)
    #: per sample with some verdicts labelled and some not: the numbers of those missing
    missing: dict[str, list[int]] = field(default_factory=dict)
    #: verdicts whose reviewers disagree (their mean counts)
    disagreements: int = 0

    @property
    def counted(self) -> dict[str, float]:
        """People's values of the samples that count for the estimate (picked at random)."""
        return {s: v for s, v in self.values.items() if s in self.random}

    @property
    def n_chosen(self) -> int:
        """Complete samples left out of the estimate: picked otherwise than at random."""
        return len(self.values) - len(self.counted)


def verdict_labels(labels: Iterable[Label]) -> dict[tuple[str, str, int], list[float]]:
    """Each labelled verdict's labels, one per reviewer (their current ones)."""
    found: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for label in labels:
        if label.verdict is not None:
            found[(label.sample_id, label.metric, label.verdict)].append(label.label)
    return found


def random_samples(labels: Iterable[Label]) -> set[str]:
    """The samples whose labels were imported as drawn at random."""
    return {label.sample_id for label in labels if label.selection == RANDOM}


def sample_labels(
    sample: Mapping[str, Any],
    verdicts: Sequence[Verdict],
    labelled: Mapping[tuple[str, str, int], list[float]],
    into: dict[str, MetricLabels],
    random: set[str],
) -> None:
    """Add one sample's people's values (and what is missing) to `into`, per metric."""
    sample_id = sample["sample_id"]
    by_metric: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        by_metric[verdict.metric].append(verdict)
    for metric, found in by_metric.items():
        value_of = PERSON_VALUE.get(metric)
        given = [labelled.get((sample_id, metric, v.index)) for v in found]
        if value_of is None or not any(given):
            continue
        entry = into.setdefault(metric, MetricLabels(metric))
        missing = [v.index for v, g in zip(found, given, strict=True) if not g]
        if missing:
            entry.missing[sample_id] = missing
            continue
        values = [sum(g) / len(g) for g in given if g]
        entry.disagreements += sum(len(set(g)) > 1 for g in given if g)
        details = sample.get("details", {}).get(metric, {})
        entry.values[sample_id] = value_of(values, details)
        if sample_id in random:
            entry.random.add(sample_id)


def estimate_order(sample_ids: Iterable[str]) -> list[str]:
    """The samples in the order the review page's "label for the estimate" mode shows
    them: shuffled with a seed of the sorted ids, so the same for every reviewer, visit
    and run of the same samples (their labels carry over into the same order)."""
    ids = list(sample_ids)
    seed = hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).digest()[:8]
    random.Random(int.from_bytes(seed, "big")).shuffle(ids)
    return ids


def complete_prefix(order: Sequence[str], entry: MetricLabels, judged: set[str]) -> set[str]:
    """The samples of the estimate order's start whose every verdict is labelled (samples
    the metric has no verdict on are passed over): a random sample of the run's, however
    their labels were made. It ends at the first sample left unlabelled, so a sample
    skipped (a hard one, say) cannot bias it."""
    found: set[str] = set()
    for sample_id in order:
        if sample_id not in judged:
            continue
        if sample_id not in entry.values:
            break
        found.add(sample_id)
    return found


def people_values(
    samples: Iterable[Mapping[str, Any]], labels: Sequence[Label]
) -> dict[str, MetricLabels]:
    """Per metric with labels, people's values of a run's samples (results.json samples).
    A sample counts for the estimate (`random`) when it lies in the complete start of the
    estimate order, or when its labels were imported as drawn at random."""
    labelled = verdict_labels(labels)
    imported_random = random_samples(labels)
    labelled_ids = {key[0] for key in labelled}
    into: dict[str, MetricLabels] = {}
    ids: list[str] = []
    judged: dict[str, set[str]] = defaultdict(set)
    for sample in samples:
        ids.append(sample["sample_id"])
        verdicts = sample_verdicts(sample)
        for verdict in verdicts:
            judged[verdict.metric].add(sample["sample_id"])
        if sample["sample_id"] in labelled_ids:
            sample_labels(sample, verdicts, labelled, into, imported_random)
    order = estimate_order(ids)
    for metric, entry in into.items():
        entry.random |= complete_prefix(order, entry, judged[metric])
    return into
