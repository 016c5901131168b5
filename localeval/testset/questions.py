"""Writing a test set: chunks spread over the corpus, a question for each, checked.

Everything is deterministic: chunking and selection depend only on the documents and the
embeddings, the judge decodes greedily under a grammar, and candidates are tried in a
fixed order. Behind the judge and embedding caches a second run with the same documents
and settings therefore asks no model anything and writes the same file.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from localeval.errors import UsageError, param, rendered
from localeval.judge import Prompt
from localeval.metrics.base import LIKELIER, Tools, require_embedder, require_judge
from localeval.metrics.parts.long_context import NoRoomForContext
from localeval.schema import Schema, max_bytes
from localeval.testset import filters, kinds
from localeval.testset.candidates import (
    Candidate,
    Events,
    GeneratedQuestion,
    GenerateResult,
    NoEvents,
    Rejection,
)
from localeval.testset.chunking import DEFAULT_CHUNK_TOKENS, Chunk, chunk_documents, estimate_tokens
from localeval.testset.documents import Document, Skipped, find_documents, read_documents
from localeval.testset.kinds import KINDS, SINGLE_FACT, TWO_CHUNK, UNANSWERABLE
from localeval.testset.selection import ALIKE, mean_similarity, nearest, related, spread_order

DEFAULT_MIX: Mapping[str, float] = {SINGLE_FACT: 0.6, TWO_CHUNK: 0.2, UNANSWERABLE: 0.2}
#: a chunk shorter than this holds too little to ask about (it still counts as corpus)
MIN_ANCHOR_TOKENS = 20
#: chunks the unanswerable check reads: a question the documents do not answer must not be
#: answered by the chunk it was written from nor by those a retriever would find for it
ANSWERABLE_TOP_K = 3


@dataclass(frozen=True)
class GenerateOptions:
    size: int = 20
    mix: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    #: None: 0.5 on the calibrated scale for a judge with a "supported" map, else the
    #: judge's faithfulness threshold in models.toml, else 0.5 (see `thresholds`)
    min_support: float | None = None
    max_overlap: float = filters.DEFAULT_MAX_OVERLAP
    max_similarity: float = filters.DEFAULT_MAX_SIMILARITY
    #: candidates tried per question wanted before a kind gives up
    attempts_per_question: int = 3
    #: candidates per chunk and kind: the second asks for another fact (two_chunk: pairs
    #: the chunk with its next most related one), so a small corpus still yields its share
    rounds: int = 2


@dataclass(frozen=True)
class Corpus:
    documents: list[Document]
    skipped: list[Skipped]
    chunks: list[Chunk]


def read_corpus(
    inputs: Sequence[Path],
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    on_skip: Callable[[Skipped], None] | None = None,
) -> Corpus:
    """The documents under `inputs`, chunked; each skipped one is passed to `on_skip` as it
    is found (so that it is reported before a UsageError for having no readable document)."""
    found, skipped = find_documents(inputs)
    documents, unreadable = read_documents(found)
    skipped += unreadable
    for note in skipped:
        if on_skip is not None:
            on_skip(note)
    if not documents:
        names = ", ".join(str(p) for p in inputs)
        raise UsageError(f"no readable document (.txt, .md, .html, .pdf) in {names}")
    return Corpus(documents, skipped, chunk_documents(documents, chunk_tokens))


def split_size(size: int, mix: Mapping[str, float]) -> dict[str, int]:
    """Questions per kind: `size` shared by the mix's weights, remainders to the largest
    fractions (ties in KINDS order)."""
    unknown = [k for k in mix if k not in KINDS]
    if unknown:
        raise UsageError(f"unknown question kind '{unknown[0]}' (known: {', '.join(KINDS)})")
    if not all(0 <= w < math.inf for w in mix.values()) or not sum(mix.values()) > 0:
        raise UsageError("the question mix needs weights >= 0 that add up to more than 0")
    total = sum(mix.values())
    exact = {k: size * mix.get(k, 0.0) / total for k in KINDS}
    counts = {k: int(v) for k, v in exact.items()}
    by_fraction = sorted(KINDS, key=lambda k: (-(exact[k] - counts[k]), KINDS.index(k)))
    for kind in by_fraction[: size - sum(counts.values())]:
        counts[kind] += 1
    return counts


@dataclass(frozen=True)
class Thresholds:
    """Where the two verdicts of the checks flip."""

    #: the verdict each sentence of a reference needs from its chunks, on the scale it is
    #: read on: calibrated when the judge has a "supported" map, else the raw P(Yes)
    support: float
    #: the raw P(Yes) an unanswerable question's nearest chunks must stay below
    answered: float
    #: whether `support` is on the calibrated scale
    calibrated: bool = False


def thresholds(tools: Tools, min_support: float | None = None) -> Thresholds:
    """The checks' thresholds for this judge.

    A calibrated verdict flips at 0.5, as in faithfulness; an uncalibrated one at the
    judge's faithfulness threshold (models.toml), else 0.5. The unanswerable check asks a
    verdict no map is fitted for, so it stays on the raw scale: a No as far below 0.5 as a
    supported raw Yes must be above it (on a small judge's compressed scale, answered
    questions scored 0.47-0.55: docs/measurements/testset.md). `min_support` sets both, as before.
    """
    calibrated = "supported" in tools.calibration
    raw = tools.verdict_thresholds.get("faithfulness", LIKELIER)
    if min_support is not None:
        return Thresholds(min_support, 1.0 - max(min_support, LIKELIER), calibrated)
    support = LIKELIER if calibrated else raw
    return Thresholds(support, 1.0 - max(raw, LIKELIER), calibrated)


class _Writer:
    """One generation run's state: the models, the corpus, what was accepted so far."""

    def __init__(
        self, corpus: Corpus, tools: Tools, options: GenerateOptions, events: Events
    ) -> None:
        self.chunks = corpus.chunks
        self.tools = tools
        self.judge = require_judge(tools)
        self.embedder = require_embedder(tools)
        self.options = options
        self.thresholds = thresholds(tools, options.min_support)
        self.events = events
        texts = [c.text for c in self.chunks]
        self.vectors = self.embedder.embed(texts) if texts else None
        self.accepted: list[GeneratedQuestion] = []
        self.accepted_vectors: list[np.ndarray] = []
        self.rejections: list[Rejection] = []
        self.used: set[int] = set()
        #: (kind, chunk) -> the fact (or question) of its first candidate, for the second
        self.first_reply: dict[tuple[str, int], str] = {}

    def order(self, size: int) -> list[int]:
        eligible = [c.index for c in self.chunks if estimate_tokens(c.text) >= MIN_ANCHOR_TOKENS]
        if self.vectors is None or not eligible:
            return []
        return spread_order(self.vectors, min(size, len(eligible)), eligible)

    def embedder_notes(self) -> list[str]:
        """A note for each language whose chunks the embedder finds alike."""
        notes = []
        for language in sorted({c.language for c in self.chunks}):
            rows = [c.index for c in self.chunks if c.language == language]
            alike = mean_similarity(self.vectors, rows) if self.vectors is not None else 0.0
            if alike >= ALIKE:
                notes.append(
                    rendered(
                        f"the embedder {self.embedder.name} finds the '{language}' chunks "
                        f"alike (mean similarity {alike:.2f}): spreading the chunks, pairing "
                        "related ones and finding the chunks nearest an unanswerable question "
                        f"work less well; a multilingual embedder ({param('embedder')}) does "
                        "better"
                    )
                )
        return notes

    def write_kind(self, kind: str, wanted: int, order: list[int]) -> None:
        self.events.phase(f"Writing {kind} questions", wanted)
        # chunks no accepted question came from first, then the rest, each in spread order;
        # then a second round over them, each asked for another fact (or partner, question)
        chunks = [i for i in order if i not in self.used] + [i for i in order if i in self.used]
        limit = self.options.attempts_per_question * wanted
        attempts = got = 0
        for round_, index in ((r, i) for r in range(self.options.rounds) for i in chunks):
            if got == wanted or attempts == limit:
                break
            outcome = self.attempt(kind, self.chunks[index], round_)
            if outcome is None:
                continue  # no second candidate in this chunk
            attempts += 1
            if isinstance(outcome, Rejection):
                self.rejections.append(outcome)
                self.events.rejected(outcome)
                continue
            self.accepted.append(outcome)
            self.used.update(c.index for c in outcome.sources)
            got += 1
            self.events.advance()

    def attempt(self, kind: str, anchor: Chunk, round_: int = 0) -> Candidate | None:
        """One candidate from the anchor chunk; None when round 1 has nothing new to ask."""
        if kind == TWO_CHUNK:
            return self._two_chunk(anchor, round_)
        avoid = self.first_reply.get((kind, anchor.index)) if round_ else None
        if round_ and avoid is None:
            return None
        if kind == UNANSWERABLE:
            return self._unanswerable(anchor, avoid)
        prompt = self.tools.prompts.generate.single_fact(anchor.text, anchor.language, avoid)
        return self._answerable(SINGLE_FACT, prompt, (anchor,), round_)

    def _reply(self, prompt: Prompt, schema: Schema) -> dict[str, str] | None:
        """The judge's reply, or None when the prompt and reply would not fit its window."""
        if not self.judge.fits(prompt, reserve=max_bytes(schema) + 1):
            return None
        reply = self.judge.generate(prompt, schema)
        # the 1.5B judge sometimes goes on from its fact: ", how can I restore a file?"
        return {key: str(value).strip().lstrip(",.;:，。；：、 ") for key, value in reply.items()}

    def _two_chunk(self, anchor: Chunk, round_: int) -> Candidate | None:
        """The anchor with its most related chunk (in round 1, its second most related)."""
        assert self.vectors is not None
        same = [c.index for c in self.chunks if c.language == anchor.language]
        partner = related(self.vectors, anchor.index, same, rank=round_)
        if partner is None:
            if round_:
                return None
            return Rejection(TWO_CHUNK, filters.NO_PARTNER, "", (anchor,), "no related chunk")
        pair = (anchor, self.chunks[partner])
        prompt = self.tools.prompts.generate.two_chunk(pair[0].text, pair[1].text, anchor.language)
        return self._answerable(TWO_CHUNK, prompt, pair, round_)

    def _answerable(
        self, kind: str, prompt: Prompt, chunks: tuple[Chunk, ...], round_: int
    ) -> Candidate:
        schema = kinds.question_and_answer(chunks[0].language, facts=len(chunks))
        reply = self._reply(prompt, schema)
        if reply is None:
            return Rejection(kind, filters.TOO_LONG, "", chunks, "prompt too long for the judge")
        question, answer = reply["question"], reply["answer"]
        if not round_:
            self.first_reply[(kind, chunks[0].index)] = reply.get("fact", question)
        texts = [c.text for c in chunks]
        vector = self._embed(question)
        if rejected := self._cheap_checks(kind, question, answer, chunks, vector):
            return rejected
        try:
            support = filters.reference_support(self.tools, texts, answer, question)
        except NoRoomForContext:
            detail = "a sentence of the reference is too long for the judge"
            return Rejection(kind, filters.TOO_LONG, question, chunks, detail)
        if min(support) < self.thresholds.support:
            scale = " (calibrated)" if self.thresholds.calibrated else ""
            detail = f"support {min(support):.2f} < {self.thresholds.support:.2f}{scale}: {answer}"
            return Rejection(kind, filters.UNSUPPORTED, question, chunks, detail)
        return self._accept(
            GeneratedQuestion(kind, question, answer, chunks, chunks, tuple(support)), vector
        )

    def _unanswerable(self, anchor: Chunk, avoid: str | None) -> Candidate:
        assert self.vectors is not None
        prompt = self.tools.prompts.generate.unanswerable(anchor.text, anchor.language, avoid)
        reply = self._reply(prompt, kinds.question_only(anchor.language))
        if reply is None:
            return Rejection(UNANSWERABLE, filters.TOO_LONG, "", (anchor,), "prompt too long")
        question = reply["question"]
        if avoid is None:
            self.first_reply[(UNANSWERABLE, anchor.index)] = question
        vector = self._embed(question)
        if rejected := self._cheap_checks(UNANSWERABLE, question, None, (anchor,), vector):
            return rejected
        # the chunk it was written from first: the one likeliest to answer it, and one an
        # embedder weak in the chunk's language may not rank near the question
        others = [i for i in nearest(self.vectors, vector, ANSWERABLE_TOP_K) if i != anchor.index]
        near = [anchor.index, *others[: ANSWERABLE_TOP_K - 1]]
        texts = [self.chunks[i].text for i in near]
        probability = filters.answered_probability(self.tools, texts, question)
        most = self.thresholds.answered  # on the raw scale (see `thresholds`)
        if probability >= most:
            where = ", ".join(f"{self.chunks[i].file}:{self.chunks[i].position}" for i in near)
            detail = f"P(answered) {probability:.2f} >= {most:.2f} by {where}"
            return Rejection(UNANSWERABLE, filters.ANSWERABLE, question, (anchor,), detail)
        reference = kinds.NOT_IN_DOCUMENTS.get(anchor.language, kinds.NOT_IN_DOCUMENTS["en"])
        return self._accept(
            GeneratedQuestion(UNANSWERABLE, question, reference, (), (anchor,), (probability,)),
            vector,
        )

    def _embed(self, text: str) -> np.ndarray:
        return np.asarray(self.embedder.embed([text])[0], dtype=np.float32)

    def _cheap_checks(
        self, kind: str, question: str, answer: str | None, chunks: tuple[Chunk, ...],
        vector: np.ndarray,
    ) -> Rejection | None:  # fmt: skip
        """The checks that need no judge call, cheapest first."""
        language = chunks[0].language

        def reject(reason: str, detail: str) -> Rejection:
            return Rejection(kind, reason, question, chunks, detail)

        if not filters.is_question(question):
            return reject(filters.NOT_A_QUESTION, "does not end with a question mark")
        if filters.question_marks(question) > 1:
            return reject(filters.NOT_A_QUESTION, "asks more than one question")
        if filters.mentions_the_text(question):
            return reject(filters.NOT_STANDALONE, "speaks of 'the text', which a user has not seen")
        written = [question] if answer is None else [question, answer]
        if not filters.in_language(written, language):
            return reject(filters.WRONG_LANGUAGE, f"the chunk is in '{language}'")
        copied = filters.copied_share(question, [c.text for c in chunks])
        if copied > self.options.max_overlap:
            return reject(filters.COPIES_CHUNK, f"{copied:.0%} of it copied from the chunk")
        twin = filters.duplicate_of(
            question, vector, [q.question for q in self.accepted], self.accepted_vectors,
            self.options.max_similarity,
        )  # fmt: skip
        if twin is not None:
            first = self.accepted[twin[0]].question
            return reject(filters.DUPLICATE, f"similarity {twin[1]:.2f} to: {first}")
        return None

    def _accept(self, question: GeneratedQuestion, vector: np.ndarray) -> GeneratedQuestion:
        self.accepted_vectors.append(vector)
        return question


class _CountingWriter(_Writer):
    """The writer as an estimate drives it, against counting models (localeval.estimate.counting):
    their replies are typical ones, not the judge's, so no check that reads the text is made
    (is it a question, its language, copying, duplicates), and every candidate passes the
    judge's checks (`passing`) or fails the last of them, whatever the verdicts."""

    def __init__(self, corpus: Corpus, tools: Tools, options: GenerateOptions, passing: bool):
        super().__init__(corpus, tools, options, NoEvents())
        most = float("inf")
        self.thresholds = Thresholds(-most, most) if passing else Thresholds(most, -most)

    def _cheap_checks(
        self, kind: str, question: str, answer: str | None, chunks: tuple[Chunk, ...],
        vector: np.ndarray,
    ) -> Rejection | None:  # fmt: skip
        return None


#: what an estimate calls embedding the chunks, beside the question kinds
EMBEDDING_CHUNKS = "embedding the chunks"


def count_testset(
    corpus: Corpus,
    tools: Tools,
    options: GenerateOptions,
    passing: bool,
    count: Callable[[str, Callable[[], object]], None],
) -> None:
    """Write a test set as `generate_testset` does, with counting `tools`, every candidate
    passing the judge's checks (`passing`: the fewest candidates, one per question) or
    failing its last one (the most: `attempts_per_question` per question, or the chunks
    run out). `count(part, work)` does the work and keeps what it asked of the models
    under `part` (EMBEDDING_CHUNKS, then each kind wanted)."""
    wanted = split_size(options.size, options.mix)
    writers: list[_CountingWriter] = []

    def embed_chunks() -> None:  # a writer embeds every chunk when it is made
        writers.append(_CountingWriter(corpus, tools, options, passing))

    count(EMBEDDING_CHUNKS, embed_chunks)
    order = writers[0].order(options.size)
    for kind in KINDS:
        if wanted[kind]:
            count(kind, partial(writers[0].write_kind, kind, wanted[kind], order))


def generate_testset(
    corpus: Corpus, tools: Tools, options: GenerateOptions, events: Events | None = None
) -> GenerateResult:
    """Write and check questions over the corpus until each kind has its share of
    `options.size` or has used up its candidates, with the judge and embedder of `tools`
    (the judge's prompt set, thresholds and calibration: see `thresholds`)."""
    events = events or NoEvents()
    wanted = split_size(options.size, options.mix)
    judge = require_judge(tools)
    started = time.perf_counter()
    before = judge.usage.snapshot()
    events.phase(f"Embedding {len(corpus.chunks)} chunks", 1)
    writer = _Writer(corpus, tools, options, events)
    events.advance()
    order = writer.order(options.size)
    for kind in KINDS:
        if wanted[kind]:
            writer.write_kind(kind, wanted[kind], order)
    usage = judge.usage - before
    return GenerateResult(
        writer.accepted, writer.rejections, wanted, usage, time.perf_counter() - started,
        writer.embedder_notes(),
    )  # fmt: skip
