"""Choosing chunks spread over the corpus, and the related chunk for a two-chunk question.

The first N chunks of a corpus are its first files' introductions; a test set drawn from
them tests one corner of what the RAG system must know. The chunks' embeddings are
clustered instead (k-means, deterministic: farthest-point start, a fixed number of
rounds), and chunks are taken one cluster at a time, the most central member of each
first, then the next most central, and so on: any prefix of the order is spread over the
topics, so chunks whose questions are rejected are replaced from the same spread. The
clusters are visited in the order their first centres were chosen (farthest-point), not
by size: with about as many clusters as chunks, an order by size is the files' order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_ROUNDS = 20
#: chunks this similar are copies of one text (a repeated footer), not two related facts
_SAME_TEXT = 0.98


def _farthest_points(vectors: np.ndarray, k: int) -> list[int]:
    """k row indices far apart: the row nearest the mean first, then each time the row
    least similar to all chosen so far (ties to the lower index)."""
    mean = vectors.mean(axis=0)
    chosen = [int(np.argmax(vectors @ mean))]
    closest = vectors @ vectors[chosen[0]]
    while len(chosen) < k:
        nxt = int(np.argmin(closest))
        if nxt in chosen:  # every row is a copy of a chosen one
            break
        chosen.append(nxt)
        closest = np.maximum(closest, vectors @ vectors[nxt])
    return chosen


def cluster(vectors: np.ndarray, k: int) -> np.ndarray:
    """Each row's cluster (0..k-1) by cosine k-means over unit vectors."""
    k = max(1, min(k, len(vectors)))
    centres = vectors[_farthest_points(vectors, k)]
    labels = np.zeros(len(vectors), dtype=int)
    for round_ in range(_ROUNDS):
        new = np.argmax(vectors @ centres.T, axis=1)
        if round_ and np.array_equal(new, labels):
            break
        labels = new
        for c in range(len(centres)):
            members = vectors[labels == c]
            if len(members):  # an empty cluster keeps its centre
                centre = members.sum(axis=0)
                centres[c] = centre / (np.linalg.norm(centre) or 1.0)
    return labels


def spread_order(vectors: np.ndarray, k: int, eligible: Sequence[int] | None = None) -> list[int]:
    """Indices of `eligible` rows (default all) in an order spread over k clusters."""
    pool = list(range(len(vectors))) if eligible is None else list(eligible)
    if not pool:
        return []
    sub = vectors[pool]
    labels = cluster(sub, k)
    groups: list[list[int]] = []
    for c in sorted(set(labels.tolist())):
        members = [i for i in range(len(pool)) if labels[i] == c]
        centre = sub[members].sum(axis=0)
        closeness = sub[members] @ (centre / (np.linalg.norm(centre) or 1.0))
        ranked = sorted(zip(members, closeness.tolist(), strict=True), key=lambda m: (-m[1], m[0]))
        groups.append([pool[i] for i, _ in ranked])
    # clusters stay in the order their centres were chosen, each the farthest from those
    # before it: a prefix of the order is spread even when each cluster is a single chunk
    order: list[int] = []
    for rank in range(max(len(g) for g in groups)):
        order += [g[rank] for g in groups if rank < len(g)]
    return order


def related(
    vectors: np.ndarray, anchor: int, candidates: Sequence[int], rank: int = 0
) -> int | None:
    """The candidate most similar to the anchor that is not a copy of it (`rank` 1: the
    next most similar, and so on), or None when there are not that many."""
    ranked = sorted(
        (
            (-float(vectors[anchor] @ vectors[index]), index)
            for index in candidates
            if index != anchor and float(vectors[anchor] @ vectors[index]) < _SAME_TEXT
        ),
    )
    return ranked[rank][1] if rank < len(ranked) else None


def nearest(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    """The k rows most similar to `query`, most similar first (ties to the lower index)."""
    similarity = vectors @ query
    return sorted(range(len(vectors)), key=lambda i: (-float(similarity[i]), i))[:k]


#: mean cosine between a language's chunks above which the embedder does not tell them
#: apart: all-MiniLM-L6-v2 on this project's English manual 0.20, on its Chinese one 0.59
ALIKE = 0.5


def mean_similarity(vectors: np.ndarray, rows: Sequence[int]) -> float:
    """The mean cosine between distinct rows (unit vectors); 0 for fewer than two."""
    if len(rows) < 2:
        return 0.0
    sub = vectors[list(rows)]
    total = float((sub @ sub.T).sum()) - len(rows)
    return total / (len(rows) * (len(rows) - 1))
