"""A prompt set owns every wording said to the judge, and a run records the set it asked
(or none, when no metric asked a judge)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from fakes import FakeEmbedder, HashJudge
from standins import PROJECT_MODELS, StandIns
from testset_fakes import EN_TOPICS, WriterJudge, manual, write_docs

from localeval.cli import main
from localeval.config import load_models_config
from localeval.data.samples import Sample
from localeval.engine import describe_run
from localeval.judge import Prompt
from localeval.metrics import REGISTRY, Tools, build_metric
from localeval.metrics.answer_relevancy import AnswerRelevancy
from localeval.metrics.context_precision import ContextPrecision
from localeval.pairwise.judge import compare_pair
from localeval.prompts.sets import RAG_6, RAG_7, PromptSet
from localeval.testset.generate import GenerateOptions, generate_testset, read_corpus

MARK = "marked "
#: the groups of a prompt set (every field but its version)
GROUPS = [f.name for f in fields(PromptSet) if f.name != "version"]


def marking(words: PromptSet) -> PromptSet:
    """The set with each wording's system message replaced by its own name, so that every
    prompt a judge sees tells which wording of the set asked it."""

    def mark(ask: Callable[..., Prompt], name: str) -> Callable[..., Prompt]:
        return lambda *args: replace(ask(*args), system=MARK + name)

    groups = {}
    for group in GROUPS:
        wordings = getattr(words, group)
        marked = {
            name: mark(getattr(wordings, name), f"{group}.{name}") for name in wording_names(group)
        }
        groups[group] = replace(wordings, **marked)
    return replace(words, version="marked", **groups)


def wording_names(group: str) -> list[str]:
    """The wordings of a group of RAG_6: its fields that make prompts (not its choices, as
    the rag group's statement modes)."""
    wordings = getattr(RAG_6, group)
    return [f.name for f in fields(wordings) if callable(getattr(wordings, f.name))]


class Recording(HashJudge):
    """The hash judge, keeping every prompt."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[Prompt] = []

    def _count(self, prompt: Prompt) -> None:
        self.prompts.append(prompt)
        super()._count(prompt)


def asked(prompts: Sequence[Prompt]) -> set[str]:
    assert all(p.system.startswith(MARK) for p in prompts), [p.system for p in prompts]
    return {p.system.removeprefix(MARK) for p in prompts}


def test_every_wording_the_judge_sees_comes_from_its_prompt_set(tmp_path: Path) -> None:
    words = marking(RAG_6)
    sample = Sample(
        "s",
        "When was the tower finished?",
        ["The tower was finished in 1889.", "It is 330 metres tall."],
        "It was finished in 1889. It is tall.",
        reference_answer="In 1889.",
    )
    judge = Recording()
    tools = Tools(judge=judge, embedder=FakeEmbedder(), prompts=words)
    # every metric that asks the judge, and the options that make them ask more
    metrics = [build_metric(name) for name in REGISTRY if build_metric(name).uses_judge]
    metrics += [AnswerRelevancy(n_questions=2), ContextPrecision({"en": "judge"})]
    for metric in metrics:
        assert metric.score(sample, tools).score is not None, metric.name
    # a sentence long enough to be written as claims
    claims = build_metric("faithfulness", {"faithfulness": {"statements": "claims"}})
    long_answer = "It was finished in 1889 for the fair, and it is 330 metres tall today."
    assert claims.score(replace(sample, answer=long_answer), tools).score is not None
    compare_pair(sample.question, sample.contexts, None, "In 1925.", "In 1889.", tools)
    compare_pair(sample.question, None, None, "In 1925.", "In 1889.", tools)
    writer = WriterJudge()
    corpus = read_corpus([write_docs(tmp_path / "docs", {"manual.md": manual(EN_TOPICS)})])
    mix = {"single_fact": 1, "two_chunk": 1, "unanswerable": 1}
    generate_testset(
        corpus,
        Tools(judge=writer, embedder=FakeEmbedder(), prompts=words),
        GenerateOptions(size=3, mix=mix, rounds=1),
    )
    every = {f"{group}.{name}" for group in GROUPS for name in wording_names(group)}
    assert asked(judge.prompts) | asked(writer.prompts) == every


def test_a_run_records_the_set_it_asked_and_none_without_a_judge() -> None:
    tools = Tools(judge=HashJudge(), embedder=FakeEmbedder(), prompts=RAG_6)
    assert describe_run([build_metric("faithfulness")], tools).prompt_version == "rag-6"
    # the judge is there, but no metric asks it: no words were said to it
    assert describe_run([build_metric("bleu")], tools).prompt_version is None
    assert describe_run([build_metric("rouge_l")], Tools()).prompt_version is None


def support_asked(answer: str) -> list[str]:
    """The last segment of each support question rag-6 asks of `answer`'s statements."""
    judge = Recording()
    sample = Sample("s", "When was the tower finished?", ["It was finished in 1889."], answer)
    build_metric("faithfulness").score(sample, Tools(judge=judge, prompts=RAG_6))
    return [p.segments[-1] for p in judge.prompts]


def test_rag_6_asks_a_bare_answer_as_an_answer_and_a_long_ones_sentences_as_rag_3() -> None:
    # one statement: its meaning may be its question's ("1889."), so it is the answer
    assert support_asked("1889.") == [' "1889."\n\nIs the answer supported by the context above?']
    # several: each sentence is something the context says or not, not "the answer"
    assert support_asked("It opened in 1889. It is tall.") == [
        ' "It opened in 1889."? Answer Yes or No.',
        ' "It is tall."? Answer Yes or No.',
    ]


def test_the_stand_ins_ask_with_the_default_judges_prompt_set(stand_ins: StandIns) -> None:
    default = load_models_config(PROJECT_MODELS).judge()
    assert load_models_config(stand_ins.models).judge().prompts == default.prompts


def evaluate_and_show(data: Path, metric: str, out: Path) -> tuple[dict[str, Any], str]:
    runner = CliRunner()
    done = runner.invoke(
        main, ["evaluate", str(data), "-m", metric, "-o", str(out), "--no-progress"]
    )
    assert done.exit_code in (0, 1), done.output
    shown = runner.invoke(main, ["runs", "show", "latest"])
    assert shown.exit_code == 0, shown.output
    return json.loads(out.read_text(encoding="utf-8"))["run"], shown.stdout


def test_evaluate_records_the_default_judges_set_and_none_for_bleu_alone(
    stand_ins: StandIns, tmp_path: Path
) -> None:
    stand_ins.use(HashJudge(), FakeEmbedder())
    data = tmp_path / "one.jsonl"
    row = {"sample_id": "a", "question": "Q?", "contexts": ["c."], "answer": "A.",
           "reference_answer": "A."}  # fmt: skip
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    default = load_models_config(PROJECT_MODELS).judge().prompts
    run, shown = evaluate_and_show(data, "faithfulness", tmp_path / "judged.json")
    assert run["prompt_version"] == default
    assert f"prompt version: {default}\n" in shown
    run, shown = evaluate_and_show(data, "bleu", tmp_path / "bleu.json")
    assert run["prompt_version"] is None
    assert "prompt version: none (no metric asked a judge)\n" in shown


def test_rag_7_asks_the_noncommittal_question_after_relevancy_s_segments() -> None:
    # so a judge that keeps its state reads the answer once for both questions
    for question, answer, language in (
        ("When was the tower finished?", "It was finished in 1889.", "en"),
        ("铁塔何时建成？", "1889年建成。", "zh"),
    ):
        noncommittal = RAG_7.rag.answer_noncommittal(question, answer, language)
        relevancy = RAG_7.rag.answer_answers(question, answer, language)
        assert noncommittal.system == relevancy.system
        assert noncommittal.segments[:-1] == relevancy.segments[:-1]
        assert question in noncommittal.segments[0] and answer in noncommittal.segments[1]
        # the question itself is rag-6's: only what comes before it changed
        before = RAG_6.rag.answer_noncommittal(question, answer, language)
        assert noncommittal.segments[-1] == before.segments[-1]
        assert before.segments[:-1] == noncommittal.segments[1:-1]
