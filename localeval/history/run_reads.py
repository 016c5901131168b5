"""Reading a stored run's results back (RunReads, what RunStore reads with): its usage, its
scores as columns, each sample as results.json writes it, one sample's evidence, the
samples' inputs. A run is read in pages of samples in dataset order, so that memory stays
bounded on either store however large the run."""

from __future__ import annotations

import itertools
import json
import math
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from localeval.database import Database
from localeval.history.records import StoredRun
from localeval.judge import Usage
from localeval.results.summary import ScoreColumns

#: samples read at once when a run is read in dataset order
PAGE = 1000


class RunReads:
    """The reading half of the run history, over a store's connection."""

    connection: Database

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """A database failure (full disk, read-only file, a server gone) as one clear
        StoreError (a UsageError)."""
        with self.connection.translating(doing):
            yield

    def usage(self, run_id: str) -> Usage:
        """What the run's stored samples cost, together."""
        with self._errors("reading a run"):
            row = self.connection.execute(
                "SELECT coalesce(sum(judge_calls), 0), coalesce(sum(cached_calls), 0), "
                "coalesce(sum(prompt_tokens), 0), coalesce(sum(generated_tokens), 0), "
                "coalesce(sum(seconds), 0.0), coalesce(sum(retries), 0) FROM run_samples "
                "WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        return Usage(*row)

    def score_columns(self, run: StoredRun) -> ScoreColumns:
        """The run's scores in dataset order; memory: a float per score, an id per sample."""
        metrics = run.info.metrics
        ids: list[str] = []
        categories: list[str | None] = []
        columns = {m: array("d") for m in metrics}  # 8 bytes a score
        with self._errors("reading a run"):
            rows = self._in_order(run.id, "r.sample_id, r.category, s.metric, s.score")
            for (sample_id, category), group in itertools.groupby(rows, key=_sample_key):
                ids.append(sample_id)
                categories.append(category)
                for column in columns.values():
                    column.append(math.nan)
                for _, _, metric, score in group:
                    if metric in columns and score is not None:
                        columns[metric][-1] = score
        return ScoreColumns(
            ids, categories, {m: np.frombuffer(c, dtype=np.float64) for m, c in columns.items()}
        )

    def sample_dicts(self, run: StoredRun) -> Iterator[dict[str, Any]]:
        """Each stored sample as results.json writes it, in dataset order, one at a time. A
        shard's samples also say their `position` in the whole dataset, the order
        `runs merge` puts them back in."""
        order = {m: i for i, m in enumerate(run.info.metrics)}
        with self._errors("reading a run"):
            rows = self._in_order(
                run.id,
                "r.sample_id, r.category, r.inputs, r.position, s.metric, s.score, "
                "s.undefined_reason, s.details",
            )
            for (sample_id, category, inputs, position), group in itertools.groupby(
                rows, key=lambda row: (row[0], row[1], row[2], row[3])
            ):
                scores: dict[str, float | None] = {}
                details: dict[str, Any] = {}
                for *_, metric, score, reason, details_json in group:
                    scores[metric] = score
                    entry = json.loads(details_json)
                    if reason is not None:
                        entry["undefined_reason"] = reason
                    details[metric] = entry
                names = sorted(scores, key=lambda m: order.get(m, len(order)))
                yield {
                    "sample_id": sample_id,
                    **({"position": position} if run.info.shard else {}),
                    "category": category,
                    "scores": {m: scores[m] for m in names},
                    "details": {m: details[m] for m in names},
                    **json.loads(inputs),
                }

    def _in_order(self, run_id: str, columns: str) -> Iterator[Sequence[Any]]:
        """The `columns` of each score of the run's samples (`r`: run_samples, `s`:
        run_scores), in dataset order, read PAGE samples at a time."""
        after = -1
        while True:
            bound = self.connection.execute(
                "SELECT position FROM run_samples WHERE run_id = ? AND position > ? "
                "ORDER BY position LIMIT 1 OFFSET ?",
                (run_id, after, PAGE - 1),
            ).fetchone()
            last = None if bound is None else int(bound[0])
            yield from self.connection.execute(
                f"SELECT {columns} FROM run_samples r JOIN run_scores s "
                "ON s.run_id = r.run_id AND s.sample_id = r.sample_id "
                "WHERE r.run_id = ? AND r.position > ? AND r.position <= ? ORDER BY r.position",
                (run_id, after, last if last is not None else 2**62),
            ).fetchall()
            if last is None:
                return
            after = last

    def sample_inputs(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Each stored sample's own text (question, answer, reference_answer, contexts) by
        its id: what its scores were made from. All at once, unlike the reads above: the
        caller (`evaluate --until-decided`, pairing them) holds the data's rows as well."""
        with self._errors("reading a run"):
            rows = self.connection.execute(
                "SELECT sample_id, inputs FROM run_samples WHERE run_id = ?", (run_id,)
            ).fetchall()
        return {str(sample_id): json.loads(inputs) for sample_id, inputs in rows}

    def sample_details(self, run_id: str, sample_id: str, metric: str) -> dict[str, Any] | None:
        """One sample's evidence for one metric (with `undefined_reason` when it has one)."""
        with self._errors("reading a run"):
            row = self.connection.execute(
                "SELECT undefined_reason, details FROM run_scores "
                "WHERE run_id = ? AND sample_id = ? AND metric = ?",
                (run_id, sample_id, metric),
            ).fetchone()
        if row is None:
            return None
        entry: dict[str, Any] = json.loads(row[1])
        if row[0] is not None:
            entry["undefined_reason"] = row[0]
        return entry


def _sample_key(row: Sequence[Any]) -> tuple[str, str | None]:
    return row[0], row[1]
