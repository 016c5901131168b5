"""Schemas compile to grammars whose outputs are bounded, and outputs are checked."""

from __future__ import annotations

import json

import pytest

from localeval.errors import JudgeError
from localeval.schema import Array, Bool, Enum, Int, Object, Str, max_bytes, parse, to_gbnf

QUESTIONS = Object((("questions", Array(Str(10), 3, 3)), ("noncommittal", Bool())))


def test_grammar_text() -> None:
    grammar = to_gbnf(QUESTIONS)
    assert grammar.splitlines()[-1].startswith("root ::= ")
    assert '"{\\"questions\\":"' in grammar
    assert "{1,10}" in grammar  # strings are bounded
    assert '("," root-questions-item){2,2}' in grammar


def test_max_bytes_bounds_the_longest_output() -> None:
    longest = {"questions": ["字" * 10] * 3, "noncommittal": False}
    text = json.dumps(longest, ensure_ascii=False, separators=(",", ":"))
    assert len(text.encode()) <= max_bytes(QUESTIONS)
    assert max_bytes(Int(0, 10)) == 2
    assert max_bytes(Enum(("A", "tie"))) == len('"tie"')


def test_parse_accepts_conforming_output() -> None:
    value = parse(QUESTIONS, '{"questions":["a","b","c"],"noncommittal":true}')
    assert value == {"questions": ["a", "b", "c"], "noncommittal": True}


@pytest.mark.parametrize(
    "text",
    [
        '{"questions":["a","b"],"noncommittal":true}',  # too few items
        '{"questions":["a","b","c"]}',  # missing key
        '{"questions":["a","b","c"],"noncommittal":1}',  # wrong type
        '{"questions":["a","b","01234567890"],"noncommittal":true}',  # string too long
        '{"questions":["a","b","c"],"noncommittal":tru',  # truncated
    ],
)
def test_parse_rejects_nonconforming_output(text: str) -> None:
    with pytest.raises(JudgeError):
        parse(QUESTIONS, text)
