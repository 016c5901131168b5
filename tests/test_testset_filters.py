"""Each check a written question must pass, on its own."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import ScriptedJudge

from localeval.metrics import Tools
from localeval.testset import filters
from localeval.testset.selection import nearest, related, spread_order

CHUNK = "Agents reach the appliance on TCP port 7443. The console listens on TCP 443."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which port do agents use?", True),
        ("代理使用哪个端口？", True),
        ('He asked "which port?"', True),
        ("Agents use port 7443.", False),
        ("Which port do agents use", False),
    ],
)
def test_a_question_ends_with_a_question_mark(text: str, expected: bool) -> None:
    assert filters.is_question(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("According to the text, which port do agents use?", True),
        ("What does the given passage say about ports?", True),
        ("根据上文，代理使用哪个端口？", True),
        ("Which port do agents use?", False),
        ("How do I restore a document?", False),
        ("What does the context above say?", True),
        ("What is a job in the context of data protection?", False),
    ],
)
def test_a_question_must_not_speak_of_the_text(text: str, expected: bool) -> None:
    assert filters.mentions_the_text(text) is expected


def test_language_of_every_text_must_be_the_chunks() -> None:
    assert filters.in_language(["Which port?", "Port 7443."], "en")
    assert not filters.in_language(["Which port?", "端口是7443。"], "en")
    assert filters.in_language(["代理使用哪个端口？", "代理使用TCP端口7443。"], "zh")


def test_copied_share_is_the_longest_verbatim_run_over_the_question() -> None:
    assert filters.copied_share("Agents reach the appliance on TCP port 7443?", [CHUNK]) == 1.0
    share = filters.copied_share("Which TCP port do agents use to reach the appliance?", [CHUNK])
    assert share == pytest.approx(3 / 10)  # "reach the appliance"
    # the best of several chunks counts; punctuation and case do not
    assert filters.copied_share("THE CONSOLE listens on... what?", ["x", CHUNK]) == pytest.approx(
        4 / 5
    )
    assert filters.copied_share(
        "终端可以暂存多少条记录？", ["离线模式下最多可以暂存五千条记录。"]
    ) == pytest.approx(4 / 11)
    assert filters.copied_share("?", [CHUNK]) == 0.0


def test_a_duplicate_is_close_in_embedding_and_shares_words() -> None:
    a, b = np.array([1.0, 0.0]), np.array([0.6, 0.8])
    accepted = ["Which port do agents use?", "How long is the warranty?"]
    assert filters.duplicate_of("Which port do the agents use?", a, [], [], 0.9) is None
    assert filters.duplicate_of("Which port do the agents use?", a, accepted, [b, a], 0.9) is None
    assert filters.duplicate_of("Which port do the agents use?", a, accepted, [a, b], 0.9) == (
        0,
        1.0,
    )
    # as close in embedding, but no word in common: an embedder that cannot tell them apart
    assert filters.duplicate_of("电池设计寿命是多少？", a, ["终端配备什么？"], [a], 0.9) is None
    assert filters.shared_words("电池寿命是多少？", "电池容量是多少？") == pytest.approx(5 / 9)


def test_reference_support_asks_the_faithfulness_verdict_of_each_sentence() -> None:
    judge = ScriptedJudge([0.9, 0.3])
    said = "Agents use 7443. The console uses 443."
    support = filters.reference_support(Tools(judge=judge), [CHUNK], said)
    assert support == [0.9, 0.3]
    assert [p.segments[-1] for p in judge.prompts] == [
        ' "Agents use 7443."? Answer Yes or No.',
        ' "The console uses 443."? Answer Yes or No.',
    ]
    assert judge.prompts[0].segments[:2] == ("Context:", "\n" + CHUNK)


def test_answered_probability_asks_whether_the_context_answers_the_question() -> None:
    judge = ScriptedJudge([0.2])
    assert filters.answered_probability(Tools(judge=judge), [CHUNK], 'Which "port"?') == 0.2
    assert judge.prompts[0].segments[-1] == (
        "\n\nDoes the context above answer the question \"Which 'port'?\"? Answer Yes or No."
    )


def unit(*rows: list[float]) -> np.ndarray:
    array = np.array(rows, dtype=np.float32)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def test_spread_order_takes_one_chunk_of_each_cluster_before_a_second() -> None:
    # three topics: rows 0-3 near x, rows 4-5 near y, row 6 alone near z
    vectors = unit(
        [1, 0.1, 0], [1, 0.12, 0], [1, 0.08, 0.01], [1, 0.11, 0.02],
        [0, 1, 0.1], [0.05, 1, 0.1], [0, 0.05, 1],
    )  # fmt: skip
    order = spread_order(vectors, k=3)
    assert sorted(order) == list(range(7))
    first = order[:3]
    assert {0, 1, 2, 3} & set(first) and {4, 5} & set(first) and 6 in first
    assert order == spread_order(vectors, k=3)  # deterministic
    assert sorted(spread_order(vectors, k=3, eligible=[4, 5, 6])) == [4, 5, 6]


def test_related_is_the_most_similar_other_chunk_but_not_a_copy() -> None:
    vectors = unit([1, 0, 0], [1, 0, 0], [0.9, 0.3, 0], [0, 1, 0])
    assert related(vectors, 0, [0, 1, 2, 3]) == 2  # row 1 is the same text
    assert related(vectors, 0, [0, 1]) is None
    assert nearest(vectors, vectors[3], 2) == [3, 2]
