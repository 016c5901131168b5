"""Labels that carry over from earlier runs of the same samples: a label says whether a
statement is true of the texts it was judged against (localeval.labels.store), whatever
judge gave the verdict, so it holds for a later run's verdict of the same metric on the
same sample that says the same text against the same texts (`AGAINST`). A changed answer
keeps the labels of its unchanged statements; its new statements need labels of their own.

A carried label keeps how its sample was picked only where the earlier run had the same
samples as this one: a random sample of other samples is not a random sample of these.
This run's own labels of an item come first; of several earlier runs', the latest made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from localeval.history.records import StoredRun
from localeval.history.store import RunStore
from localeval.labels.store import Label, LabelStore
from localeval.results.person_values import CHOSEN
from localeval.results.verdicts import Verdict, sample_verdicts

#: per metric, the sample's fields its verdicts are judged against (or depend on): an
#: earlier label carries over only where these are the same
AGAINST: dict[str, tuple[str, ...]] = {
    "faithfulness": ("question", "contexts"),
    "context_recall": ("question", "contexts"),
    "context_precision": ("question", "reference_answer", "answer"),
    "answer_relevancy": ("question",),
    "answer_correctness": ("question", "answer", "reference_answer"),
}


#: how a carried label's source begins ("run ID": the run it was made on)
CARRIED = "run "


def labelled_runs(store: RunStore, run: StoredRun) -> list[str]:
    """The other runs of the database that have labels, latest first."""
    with store.connection.translating("reading labels"):
        rows = store.connection.execute(
            "SELECT run_id, MAX(id) FROM run_labels WHERE run_id <> ? GROUP BY run_id "
            "ORDER BY MAX(id) DESC",
            (run.id,),
        ).fetchall()
    return [row[0] for row in rows]


def _same_against(metric: str, now: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    return all(now.get(name) == before.get(name) for name in AGAINST.get(metric, ()))


def _carried(
    label: Label,
    before: Mapping[str, Any],
    now: Mapping[str, Any],
    verdicts: Sequence[Verdict],
    selection: str,
) -> Label | None:
    """The label on this run's verdict that says what its labelled verdict said, or None."""
    if label.verdict is None or not _same_against(label.metric, now, before):
        return None
    earlier = [v for v in sample_verdicts(before) if v.metric == label.metric]
    old = next((v for v in earlier if v.index == label.verdict), None)
    if old is None:
        return None
    # of several verdicts of one text, the one at the same place among them
    place = [v.index for v in earlier if v.text == old.text].index(old.index)
    same = [v for v in verdicts if v.metric == label.metric and v.text == old.text]
    if place >= len(same):
        return None
    return replace(label, verdict=same[place].index, selection=selection, id=None)


def carried_labels(
    store: RunStore, run: StoredRun, samples: Sequence[Mapping[str, Any]]
) -> list[Label]:
    """Labels of earlier runs' verdicts that hold for this run's (`samples`: its
    results.json samples), each reviewer's latest of each item, none where this run's own
    reviewer labelled the item."""
    by_id = {s["sample_id"]: s for s in samples}
    verdicts = {s["sample_id"]: sample_verdicts(s) for s in samples}
    labels = LabelStore(store.connection, store.path)
    taken = {(*x.item, x.reviewer) for x in labels.current(run.id)}
    found: list[Label] = []
    for other_id in labelled_runs(store, run):
        other = store.get(other_id)
        if not other.complete:
            continue
        earlier = [x for x in labels.current(other_id) if x.sample_id in by_id]
        if not earlier:
            continue
        before = {s["sample_id"]: s for s in store.sample_dicts(other)}
        same_samples = set(before) == set(by_id)
        for label in earlier:
            if label.sample_id not in before:
                continue
            selection = label.selection if same_samples else CHOSEN
            now = by_id[label.sample_id]
            carried = _carried(
                label, before[label.sample_id], now, verdicts[label.sample_id], selection
            )
            if carried is None or (*carried.item, carried.reviewer) in taken:
                continue
            taken.add((*carried.item, carried.reviewer))
            found.append(replace(carried, source=f"{CARRIED}{other_id}"))
    return found
