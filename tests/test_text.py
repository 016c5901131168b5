"""Sentence splitting and language detection for English, Chinese and mixed text."""

from __future__ import annotations

from localeval.text import detect_language, split_sentences


def test_english_sentences() -> None:
    text = "Dr. Smith joined U.S. Steel in 1990. He left in 2001! Why? Nobody knows."
    assert split_sentences(text) == [
        "Dr. Smith joined U.S. Steel in 1990.",
        "He left in 2001!",
        "Why?",
        "Nobody knows.",
    ]


def test_decimals_and_initials_do_not_split() -> None:
    assert split_sentences("It weighs 3.5 kg. J. R. R. Tolkien wrote it.") == [
        "It weighs 3.5 kg.",
        "J. R. R. Tolkien wrote it.",
    ]


def test_chinese_sentences() -> None:
    text = "团队版每月12欧元。个人版免费！是否支持退款？支持。"
    assert split_sentences(text) == [
        "团队版每月12欧元。",
        "个人版免费！",
        "是否支持退款？",
        "支持。",
    ]


def test_mixed_lines_and_bullets() -> None:
    text = "Plans:\n- Personal is free.\n- Team costs 12 EUR.\n\n中文句子。"
    assert split_sentences(text) == [
        "Plans:",
        "- Personal is free.",
        "- Team costs 12 EUR.",
        "中文句子。",
    ]


def test_pieces_without_letters_join_a_sentence() -> None:
    assert split_sentences("It is done. 1.") == ["It is done. 1."]
    assert split_sentences("1. Open it. 2. Close it.") == ["1. Open it.", "2. Close it."]
    assert split_sentences("") == []
    assert split_sentences("...") == []


def test_a_number_alone_is_a_statement() -> None:
    assert split_sentences("1994") == ["1994"]
    assert split_sentences(" 1,708 ") == ["1,708"]
    assert split_sentences("-") == []
    # a list number on a line of its own is still no statement when sentences follow
    assert split_sentences("1.\nOpen it.") == ["Open it."]


def test_a_bare_reply_is_read_with_the_sentence_it_introduces() -> None:
    assert split_sentences("Yes. You get a full refund.") == ["Yes. You get a full refund."]
    assert split_sentences("No!\nIt stops renewing.") == ["No! It stops renewing."]
    assert split_sentences("It opens at 9. Yes.") == ["It opens at 9. Yes."]
    assert split_sentences("是的。可以退款。") == ["是的。 可以退款。"]
    assert split_sentences("Yes, you can cancel.") == ["Yes, you can cancel."]
    # on its own, a reply is the statement
    assert split_sentences(" Yes. ") == ["Yes."]
    assert split_sentences("不") == ["不"]
    # a word that only begins like one is an ordinary sentence
    assert split_sentences("Nobody came. Sure enough.") == ["Nobody came.", "Sure enough."]


def test_detect_language() -> None:
    assert detect_language("团队版每月多少钱？") == "zh"
    assert detect_language("How much is the Team plan?") == "en"
    assert detect_language("Nimbus Drive 团队版每月多少钱？") == "zh"
    assert detect_language("12345") == "en"


def test_neutralised_keeps_whitespace_and_replaces_what_hides_or_reorders_text() -> None:
    from localeval.text import neutralised

    shown = neutralised("a\u202eb\u2066c\x1b[2Kd\x00\te\nf\r\n中文")
    assert shown == "a\ufffdb\ufffdc\ufffd[2Kd\ufffd\te\nf\r\n中文"


def test_every_cjk_check_reads_the_same_ranges() -> None:
    from localeval.metrics.parts.reference_tokens import has_cjk
    from localeval.testset.chunking import estimate_tokens
    from localeval.text import is_cjk_char, is_han_char

    # a basic ideograph, extension B and extension H, kana, a hangul syllable
    han, kana_and_hangul = ["中", "\U00020000", "\U0003134a"], ["か", "カ", "가"]
    assert all(is_cjk_char(c) and is_han_char(c) for c in han)
    assert all(is_cjk_char(c) and not is_han_char(c) for c in kana_and_hangul)
    assert not any(is_cjk_char(c) for c in "aé1。")
    chars = han + kana_and_hangul
    assert all(has_cjk(c) for c in chars)
    # written without spaces, each is a token of its own
    assert estimate_tokens("".join(chars)) == len(chars)
    assert detect_language("\U0003134a\U00020000 ok") == "zh"
