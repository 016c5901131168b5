"""Claims: a text's sentences as the short facts they state, written by the judge.

A sentence of a long answer often holds several facts ("It costs 12 euros a month, or 10
billed yearly, and includes 2 TB"); asked about as a whole, a small judge says a text
"says" it when it says one of them. Here the judge writes each sentence's facts as claims
(at most CLAIMS_PER_SENTENCE, each a short statement that reads without the text, a
pronoun replaced by what it names), in a grammar-constrained JSON list, one call per
sentence after the whole text (read once: the shared prompt prefix). Claims are cached
with every judge call, by the prompt (the text, the sentence and the prompt set's
wording) and the judge, so a reference's claims are written once and reused by every later
run on the same cache.

A sentence's claims are checked, and the sentence is kept as written instead (the reason
in the details' `claims_fallback`) when no claim states anything, a claim is in another
language than the sentence, a claim is much longer than the sentence or mostly made of
words the sentence does not have (it came from elsewhere), or a number of the sentence is
in none of its claims (a dropped hard fact). A sentence of at most SHORT_WORDS words
(CJK: SHORT_CJK characters) is one claim already and costs no call.

Each claim carries an equal share of its sentence's weight (its words), so that a text's
share read by length stays the share of its sentences (localeval.metrics.answer_correctness).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.judge import Judge
from localeval.metrics.parts.reference_tokens import has_cjk, rouge_tokens
from localeval.prompts.sets import RagPrompts
from localeval.schema import Array, Object, Str, max_bytes
from localeval.text import detect_language, states_nothing

CLAIMS_PER_SENTENCE = 4
CLAIM_CHARS = 200
#: a sentence this short is one claim already: no call
SHORT_WORDS, SHORT_CJK = 8, 15
#: how much longer than its sentence a claim may be (a subject named in full)
LONGER_WORDS = 8
CLAIMS_SCHEMA = Object((("claims", Array(Str(CLAIM_CHARS), 1, CLAIMS_PER_SENTENCE)),))
#: generated tokens a claims reply may take (every grammar token adds a byte; +1: the end)
REPLY_TOKENS = max_bytes(CLAIMS_SCHEMA) + 1

# citation marks ("[4]", "[1][2]") and list numbers ("1.", "2)") are not facts of a sentence
_CITATION = re.compile(r"\[\d+(?:[,\s]*\d+)*\]")
_LIST_NUMBER = re.compile(r"^\s*\d+[.)]\s")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass
class Statements:
    """What a text's statements are: each statement, the sentence it comes from, the
    sentences, and the sentences kept whole instead of their claims (with why)."""

    texts: list[str]
    sentence_of: list[int]
    sentences: list[str]
    fallbacks: list[dict[str, Any]] = field(default_factory=list)

    def weights(self) -> list[float]:
        """Each statement's share of its sentence's words (a CJK character is a word)."""
        counts = [self.sentence_of.count(i) for i in range(len(self.sentences))]
        return [max(1, len(rouge_tokens(self.sentences[i]))) / counts[i] for i in self.sentence_of]

    def details(self) -> dict[str, Any]:
        """What the details say of claims (nothing for statements that are sentences)."""
        if self.texts == self.sentences:
            return {"claims_fallback": self.fallbacks} if self.fallbacks else {}
        found: dict[str, Any] = {"sentences": self.sentences, "claim_sentence": self.sentence_of}
        if self.fallbacks:
            found["claims_fallback"] = self.fallbacks
        return found


def as_sentences(sentences: Sequence[str]) -> Statements:
    """The sentences themselves as the statements."""
    return Statements(list(sentences), list(range(len(sentences))), list(sentences))


def is_short(sentence: str) -> bool:
    """A sentence too short to hold more than one fact."""
    if has_cjk(sentence):
        return len(rouge_tokens(sentence)) <= SHORT_CJK
    return len(rouge_tokens(sentence)) <= SHORT_WORDS


def _words(text: str) -> list[str]:
    return rouge_tokens(_CITATION.sub(" ", text))


def _numbers(text: str) -> set[str]:
    text = _LIST_NUMBER.sub(" ", _CITATION.sub(" ", text))
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def checked_claims(sentence: str, claims: Sequence[str]) -> tuple[list[str], str | None]:
    """The claims worth asking about (those that state something, once each), or why the
    sentence should be kept whole instead."""
    kept: list[str] = []
    for claim in claims:
        claim = claim.strip().lstrip(",;:，；：、 ").strip()
        if claim and not states_nothing(claim) and claim not in kept:
            kept.append(claim)
    if not kept:
        return [], "no claim states anything"
    language = detect_language(sentence)
    words = set(_words(sentence))
    for claim in kept:
        if detect_language(claim) != language:
            return [], f"a claim is not in the sentence's language: {claim!r}"
        claim_words = _words(claim)
        if len(claim_words) > len(_words(sentence)) + LONGER_WORDS:
            return [], f"a claim is longer than the sentence: {claim!r}"
        if sum(w in words for w in claim_words) < 0.5 * len(claim_words):
            return [], f"a claim is mostly not in the sentence: {claim!r}"
    missing = _numbers(sentence) - set().union(*(_numbers(c) for c in kept))
    if missing:
        return [], f"the claims leave out {', '.join(sorted(missing))}"
    return kept, None


def written_claims(
    text: str, sentences: Sequence[str], judge: Judge, prompts: RagPrompts
) -> Statements:
    """The claims of each sentence of `text`, written by the judge and checked; a sentence
    whose claims fail their checks (or do not fit the judge's window) stays whole."""
    language = detect_language(text)
    statements = Statements([], [], list(sentences))
    for index, sentence in enumerate(sentences):
        claims: list[str] = [sentence]
        if not is_short(sentence):
            prompt = prompts.claims_of_sentence(text, sentence, language)
            if judge.fits(prompt, reserve=REPLY_TOKENS):
                written = judge.generate(prompt, CLAIMS_SCHEMA)["claims"]
                kept, reason = checked_claims(sentence, written)
            else:
                kept, reason = [], "too long for the judge's window"
            if reason is None:
                claims = kept
            else:
                statements.fallbacks.append({"sentence": index, "reason": reason})
        statements.texts += claims
        statements.sentence_of += [index] * len(claims)
    return statements


def statement_weights(statements: Sequence[str], details: Mapping[str, Any]) -> list[float]:
    """Each statement's weight in a text read by length: its words (a CJK character is a
    word), or, for claims (details' `sentences` and `claim_sentence`), an equal share of
    its sentence's words."""
    sentences, sentence_of = details.get("sentences"), details.get("claim_sentence")
    if isinstance(sentences, list) and isinstance(sentence_of, list):
        return Statements(list(statements), sentence_of, sentences).weights()
    return [max(1, len(rouge_tokens(s))) for s in statements]
