"""Tokens for the reference-overlap metrics (BLEU, ROUGE-L), CJK text one character a token.

Chinese and Japanese are written without spaces, so splitting on whitespace makes a whole
sentence one "word" and any answer that is not a verbatim copy of the reference scores 0.
Here every ideograph, kana and hangul syllable, and every CJK or full-width punctuation
mark, is a token of its own; the rest of the text is split as each metric's library does
for English. Mixed text ("用Python写代码") works: 用 / Python / 写 / 代 / 码.
"""

from __future__ import annotations

import re

from localeval.text import CJK_RANGES

# Characters that are a token each: the scripts written without spaces (localeval.text:
# ideographs with their extensions and compatibility forms, kana, hangul syllables), and
# the CJK marks and forms around them.
_CJK_TOKEN = CJK_RANGES + (
    "\u1100-\u11ff"  # hangul jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3000-\u303f"  # CJK punctuation (、。「」)
    "\u3100-\u312f\u3130-\u318f"  # bopomofo, hangul compatibility jamo
    "\u31a0-\u31ff"  # bopomofo extension, CJK strokes, katakana extension
    "\u3200-\u33ff"  # enclosed CJK letters, CJK compatibility
    "\ufe10-\ufe1f\ufe30-\ufe4f"  # vertical forms, CJK compatibility forms
    "\uff00-\uffef"  # full-width ASCII and punctuation, half-width kana and hangul
)
CJK_TOKEN = re.compile(f"[{_CJK_TOKEN}]")
# ROUGE's tokens: one CJK character, or a run of letters and digits in any other script
_ROUGE_TOKEN = re.compile(f"[{_CJK_TOKEN}]|[^\\W_{_CJK_TOKEN}]+")


def has_cjk(text: str) -> bool:
    """Whether the text holds any character that is tokenized on its own."""
    return CJK_TOKEN.search(text) is not None


def space_cjk(text: str) -> str:
    """The text with a space on either side of each CJK character, so that a tokenizer that
    splits on whitespace sees each one as a word."""
    return CJK_TOKEN.sub(lambda m: f" {m.group(0)} ", text)


def rouge_tokens(text: str) -> list[str]:
    """Lower-cased tokens as the rouge-score package makes them for English (runs of letters
    and digits; punctuation dropped), with each CJK character a token of its own.

    For ASCII text this is exactly rouge-score's default tokenizer; unlike it, letters
    outside a-z ("café", "Straße") are kept instead of being dropped.
    """
    return [token for token in _ROUGE_TOKEN.findall(text.lower()) if not _is_cjk_punct(token)]


def _is_cjk_punct(token: str) -> bool:
    # CJK punctuation ("。", "，") is dropped like ASCII punctuation is
    return len(token) == 1 and CJK_TOKEN.match(token) is not None and not token.isalnum()
