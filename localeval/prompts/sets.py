"""Prompt sets: every wording localeval says to its judge, in one version, by name.

A set holds the words of the RAG metrics (`rag`), the rubric (`rubric`), the A/B judge
(`pairwise`) and test-set writing (`generate`). A judge's models.toml entry names the set
it is asked with (the default judge's: `prompts = "rag-6"`; an entry that names none, and a
judge given without an entry, get DEFAULT_PROMPTS, rag-3), since wording measured best on
one model family need not be on another (docs/measurements/judge-quality.md). A set's name
is its version: a run records the set it asked (none when no metric asked the judge), and
runs asked with different sets are not compared as equals.

A set, once released, never changes its words, and neither does any group of wordings a
released set holds: a new wording is a new group in a new set (a new field of a group
gets its default from the module that words it, as `chunk_useful` did). A new set that
changes only the RAG wordings takes the other groups as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from localeval.data.criteria import Criterion
from localeval.errors import ConfigError
from localeval.judge import Prompt
from localeval.prompts import generate, pairwise, rag, rubric
from localeval.text import detect_language

#: what rag-4's relevancy question ends with; its support question ends bare, which the
#: 1.5B judge separated better (docs/measurements/judge-quality.md)
TAIL_4 = " Answer Yes or No."

#: what the rubric and the A/B judge show of a sample: question, answer(s), contexts,
#: reference answer (each prompt module's own order)
Contexts = Sequence[str] | None


@dataclass(frozen=True)
class StatementMode:
    """How a statement metric makes a text into statements and checks each
    (localeval.metrics.parts.statements): a prompt set's choice per metric, measured for its judge
    (docs/measurements/judge-quality.md), so that a run's prompt version says which it used."""

    #: the judge's claims of each sentence (localeval.metrics.parts.claims), else the sentences
    claims: bool = False
    #: a long evidence text: each statement asked against its few closest sentences
    #: (localeval.metrics.parts.evidence), else against the whole text
    focused: bool = False
    #: numbers, dates and amounts the evidence states otherwise turn a "yes" into a "no"
    #: (localeval.metrics.parts.hard_facts)
    hard_facts: bool = False

    @property
    def name(self) -> str:
        """ "sentences", "claims", "claims+focused+hard-facts", ..."""
        parts = ["claims" if self.claims else "sentences"]
        parts += ["focused"] if self.focused else []
        parts += ["hard-facts"] if self.hard_facts else []
        return "+".join(parts)


#: a statement metric's way where a set names none: each sentence against the whole text
SENTENCES = StatementMode()


@dataclass(frozen=True)
class RagPrompts:
    """The questions of faithfulness, context recall, answer relevancy, context precision."""

    #: does the context support this statement (contexts, question, statement)?
    #: (faithfulness, context recall)
    context_says: Callable[[Sequence[str], str, str], Prompt]
    #: does the answer (in this language) answer the question?
    answer_answers: Callable[[str, str, str], Prompt]
    #: does the answer (in this language) dodge the question (question, answer, language)?
    answer_noncommittal: Callable[[str, str, str], Prompt]
    #: write n questions the answer would answer (evidence)
    questions_for_answer: Callable[[str, int, str], Prompt]
    #: is this chunk useful for reaching the answer (chunk, question, target, language)?
    #: (context precision, for the languages the judge decides; the same in every set, as
    #: no run before the sets' first one with it asked the judge about chunks)
    chunk_useful: Callable[[str, str, str, str], Prompt] = rag.chunk_useful
    #: does this text say the statement (texts, question, statement)? (answer correctness:
    #: the reference, then the answer, as the text; the same in every set, as no run before
    #: the sets' first one with it asked it)
    text_says: Callable[[Sequence[str], str, str], Prompt] = rag.text_says
    #: does the context support this statement, one of several a text was split into? None:
    #: `context_says`, whatever the count (rag-6 asks a long text's sentences without
    #: presenting each as "the answer", which a background sentence is not)
    context_says_of_several: Callable[[Sequence[str], str, str], Prompt] | None = None
    #: the facts one sentence of a text states, as claims (text, sentence, language); the
    #: same in every set, as no run before the sets' first one with it asked it
    claims_of_sentence: Callable[[str, str, str], Prompt] = rag.claims_of_sentence
    #: per statement side ("faithfulness", "context_recall", "answer_correctness" for the
    #: answer's statements, "answer_correctness.reference" for the reference's), how its
    #: text is made into statements; "SIDE@zh" for one language's own; absent: SENTENCES
    statement_modes: Mapping[str, StatementMode] = field(default_factory=dict)

    def statement_mode(self, side: str, language: str) -> StatementMode:
        """How `side` makes a text of `language` into statements in this set."""
        return self.statement_modes.get(
            f"{side}@{language}", self.statement_modes.get(side, SENTENCES)
        )

    def support_question(self, statements: int) -> Callable[[Sequence[str], str, str], Prompt]:
        """The question asked of each statement of a text split into `statements` of them."""
        if statements > 1 and self.context_says_of_several is not None:
            return self.context_says_of_several
        return self.context_says


@dataclass(frozen=True)
class RubricPrompts:
    """The rubric's 0-10 scores and its one sentence of feedback."""

    #: how well the answer meets one criterion (question, answer, contexts, reference, criterion)
    criterion_score: Callable[[str, str, Contexts, str | None, Criterion], Prompt]
    #: how good the answer is overall (question, answer, contexts, reference)
    overall_score: Callable[[str, str, Contexts, str | None], Prompt]
    #: its main weakness or strength (question, answer, contexts, reference, language)
    feedback: Callable[[str, str, Contexts, str | None, str], Prompt]


@dataclass(frozen=True)
class PairwisePrompts:
    """The A/B judge's questions (`compare-answers`)."""

    #: which answer is better (question, contexts, reference, shown first, shown second)?
    which_is_better: Callable[[str, Contexts, str | None, str, str], Prompt]
    #: does this one answer fully answer the question (question, contexts, reference, answer)?
    answers_question: Callable[[str, Contexts, str | None, str], Prompt]


@dataclass(frozen=True)
class GeneratePrompts:
    """The words with which the judge writes test questions (`generate`) and checks them."""

    #: one fact of the chunk as a question and answer (chunk, language, fact to avoid)
    single_fact: Callable[[str, str, str | None], Prompt]
    #: a question that needs a fact of each chunk (first, second, language)
    two_chunk: Callable[[str, str, str], Prompt]
    #: a question on the chunk's topic it does not answer (chunk, language, one to avoid)
    unanswerable: Callable[[str, str, str | None], Prompt]
    #: do these chunks answer the question (contexts, question)?
    context_answers: Callable[[Sequence[str], str], Prompt]


#: the wordings of the rubric, the A/B judge and test-set writing released with rag-3 and
#: held by every set since: never changed (see the module's docstring)
RUBRIC_1 = RubricPrompts(rubric.criterion_score, rubric.overall_score, rubric.feedback)
PAIRWISE_1 = PairwisePrompts(pairwise.which_is_better, pairwise.answers_question)
GENERATE_1 = GeneratePrompts(
    generate.single_fact, generate.two_chunk, generate.unanswerable, generate.context_answers
)


@dataclass(frozen=True)
class PromptSet:
    """Every wording said to the judge, in one version (its name)."""

    version: str
    rag: RagPrompts
    rubric: RubricPrompts = RUBRIC_1
    pairwise: PairwisePrompts = PAIRWISE_1
    generate: GeneratePrompts = GENERATE_1


RAG_3 = PromptSet(
    "rag-3",
    RagPrompts(
        lambda contexts, question, statement: rag.context_says(contexts, statement),
        rag.answer_answers,
        rag.answer_noncommittal,
        rag.questions_for_answer,
    ),
)

RAG_4 = PromptSet(
    "rag-4",
    RagPrompts(
        lambda contexts, question, statement: rag.answer_supported(
            contexts, question, statement, ""
        ),
        lambda question, answer, language: rag.question_then_answer(
            question, answer, language, TAIL_4
        ),
        rag.answer_noncommittal,
        rag.questions_for_answer,
    ),
)


def supported_by_language(contexts: Sequence[str], question: str, statement: str) -> Prompt:
    """rag-5's support question: rag-3's "Does the context above say that ...?" for a
    Chinese sample (by its question), rag-4's "Is the answer supported ...?" for others.
    On the 1.5B judge rag-4's wording lost on both Chinese sets it was measured on
    (docs/measurements/judge-quality.md)."""
    if detect_language(question if question.strip() else statement) == "zh":
        return rag.context_says(contexts, statement)
    return rag.answer_supported(contexts, question, statement, "")


RAG_5 = PromptSet(
    "rag-5",
    RagPrompts(
        supported_by_language,
        RAG_4.rag.answer_answers,
        rag.answer_noncommittal,
        rag.questions_for_answer,
    ),
)

RAG_6 = PromptSet(
    "rag-6",
    RagPrompts(
        supported_by_language,
        RAG_4.rag.answer_answers,
        rag.answer_noncommittal,
        rag.questions_for_answer,
        # a text of several statements: each asked as rag-3 asks it, in every language (the
        # 1.5B's wording chosen by leaving one labelled set out: docs/measurements/judge-quality.md)
        context_says_of_several=RAG_3.rag.context_says,
    ),
)

#: answer correctness as the pre-registered rule chose it on the dev rows (issue 36:
#: docs/measurements/judge-quality.md): numbers stated otherwise checked on both sides, and
#: a Chinese reference's claims. An option, not a default: on the held-out rows neither part
#: beat rag-6's sentences by more than noise, and English was not scored on held-out rows.
_FACTS = StatementMode(hard_facts=True)
RAG_6_CLAIMS = PromptSet(
    "rag-6-claims",
    replace(
        RAG_6.rag,
        statement_modes={
            "answer_correctness": _FACTS,
            "answer_correctness.reference": _FACTS,
            "answer_correctness.reference@zh": StatementMode(claims=True, hard_facts=True),
        },
    ),
)

#: rag-6 with the noncommittal question asked after the question and the answer, as the
#: relevancy question is: a judge that keeps its state then reads each answer once for both
#: (a new version of the answers costs its tokens once less). Chosen by a pre-registered
#: rule on WikiEval and RGB (docs/measurements/judge-quality.md).
RAG_7 = PromptSet("rag-7", replace(RAG_6.rag, answer_noncommittal=rag.question_answer_noncommittal))

#: every released set, by name
PROMPT_SETS: dict[str, PromptSet] = {
    s.version: s for s in (RAG_3, RAG_4, RAG_5, RAG_6, RAG_6_CLAIMS, RAG_7)
}
#: the set of a judge whose entry names none, and of a judge given without an entry
DEFAULT_PROMPTS = RAG_3.version


def statement_mode_changes(before: str, after: str, metrics: Sequence[str]) -> list[str]:
    """How two released sets make the statements of these metrics differently, one line
    per side ("answer_correctness (reference): sentences vs claims"); [] for a set that is
    not released here, whose choices are not known."""
    if before not in PROMPT_SETS or after not in PROMPT_SETS:
        return []
    sets = [PROMPT_SETS[before].rag, PROMPT_SETS[after].rag]
    changes = []
    for key in sorted(sets[0].statement_modes.keys() | sets[1].statement_modes.keys()):
        side, _, language = key.partition("@")
        metric, _, part = side.partition(".")
        # a language's own choice compared with the other set's for that language
        one, other = (prompts.statement_mode(side, language).name for prompts in sets)
        if metric in metrics and one != other:
            where = ", ".join(p for p in (part, language) if p)
            changes.append(f"{metric}{f' ({where})' if where else ''}: {one} vs {other}")
    return changes


def prompt_set(name: str, where: str = "models.toml") -> PromptSet:
    """The set called `name`; ConfigError naming `where` for an unknown one."""
    if name not in PROMPT_SETS:
        known = ", ".join(sorted(PROMPT_SETS))
        raise ConfigError(f"{where}: unknown prompt set '{name}' (known: {known})")
    return PROMPT_SETS[name]
