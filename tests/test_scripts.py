"""The measuring scripts stay in step with the prompts they count (they run real models, so
CI would otherwise only notice a broken one when someone measures)."""

from __future__ import annotations

from script_modules import load_script

from localeval.data.samples import Sample


class WordTokenizer:
    """A stand-in judge whose tokens are words."""

    def _tokenize(self, text: str, special: bool) -> list[str]:
        return text.split()


def test_bench_counts_the_sample_and_each_instruction_once() -> None:
    bench = load_script("bench")
    sample = Sample(
        sample_id="s",
        question="two words",
        contexts=["three more words", "one"],
        answer="an answer",
        reference_answer="ref",
    )
    instructions = bench.own_tokens(WordTokenizer(), Sample(sample_id="e", question="x")) - 1
    assert instructions > 20  # the system message and the five instructions
    assert bench.own_tokens(WordTokenizer(), sample) == instructions + 2 + 3 + 1 + 2 + 1
