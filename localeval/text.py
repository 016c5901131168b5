"""Language detection and sentence splitting, for English, Chinese and mixed text; and
text from data made safe to print.

Statements are the unit the judge is asked about. A deterministic splitter gives the
same statements run after run and never loses or invents content, which a small judge
model asked to "decompose" an answer does routinely.
"""

from __future__ import annotations

import re
import unicodedata

#: Chinese characters, as ranges of a regular expression's character class: the CJK
#: unified ideographs (extension A, the basic block), the compatibility ideographs, and
#: extensions B to H with the compatibility supplement. Every CJK range check is built from
#: these two (is_han_char, is_cjk_char, the tokenizers' patterns).
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
#: the scripts written without spaces between words: Chinese, Japanese kana, Korean hangul
#: syllables
CJK_RANGES = f"\u3040-\u30ff{HAN_RANGES}\uac00-\ud7af"
_CJK = re.compile(f"[{CJK_RANGES}]")
_HAN = re.compile(f"[{HAN_RANGES}]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_DIGIT = re.compile(r"\d")
# A bare reply ("Yes.", "No!", "是的。") states nothing the context could support on its own:
# it is read with the sentence that follows, which says what it affirms.
_BARE_REPLY = re.compile(
    r"(?:yes|no|yeah|yep|nope|sure|certainly|absolutely|indeed|correct|right|ok|okay|true|false"
    r"|是的?|对的?|不是|不对|没有|不|可以|不可以|不行|好的?)[\s,.!?;:。！？，；：…]*",
    re.IGNORECASE,
)

#: words after which a full stop does not end a sentence
_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "no",
    "fig",
    "inc",
    "ltd",
    "co",
    "corp",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "u.s",
    "u.k",
    "approx",
    "est",
    "al",
    "gen",
    "gov",
    "mt",
    "ft",
    "vol",
}

# End of a sentence in Chinese/Japanese punctuation: no space needed after it. Closing
# quotes and brackets that follow stay with the sentence.
_CJK_END = re.compile(r"[。！？；!?](?:[”’」』）)\"']*)")
# End of a Latin-script sentence: . ! ? followed by space and a likely sentence start.
_LATIN_END = re.compile(r"([.!?])([\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9\u00C0-\u024F])")


def is_cjk_char(char: str) -> bool:
    """True for a character of a script written without spaces (Chinese, Japanese, Korean)."""
    return bool(_CJK.match(char))


def is_han_char(char: str) -> bool:
    """True for a Chinese character (also written in Japanese and, rarely, Korean)."""
    return bool(_HAN.match(char))


#: the languages localeval tells apart (detect_language), and their names in messages
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
LANGUAGES = tuple(LANGUAGE_NAMES)


def detect_language(text: str) -> str:
    """'zh' when Chinese characters make up a good share of the letters, else 'en'.

    Only the two languages localeval has prompts for are told apart; anything else is
    treated as English-like and the judge is told to keep the text's own language.
    """
    letters = _LETTER.findall(text)
    if not letters:
        return "en"
    han = sum(1 for ch in letters if is_han_char(ch))
    return "zh" if han / len(letters) >= 0.2 else "en"


def states_nothing(piece: str) -> bool:
    """True for a piece of text without a letter ("1.", "-") or a bare reply ("Yes.",
    "是的。"): it says nothing on its own."""
    return not _LETTER.search(piece) or bool(_BARE_REPLY.fullmatch(piece.strip()))


def _split_latin(block: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _LATIN_END.finditer(block):
        if match.group(1) == ".":
            before = block[start : match.start()].split()
            word = before[-1].lower().rstrip(".") if before else ""
            # "Dr. Smith", "U.S. Army", "J. R. R. Tolkien": the dot belongs to the word
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
        end = match.end(2)
        pieces.append(block[start:end])
        start = match.end()
    pieces.append(block[start:])
    return pieces


def split_sentences(text: str) -> list[str]:
    """Split text into sentences, keeping each sentence's text exactly as written.

    Lines (list items, paragraphs) are split first, then Chinese end punctuation, then
    Latin sentence ends. A piece without any letter (a list number such as "1.", a lone
    dash) is not a statement: it is joined to the sentence that follows it on its line,
    or else to the one before. A bare reply ("Yes.", "是的。") is joined the same way, or to
    the first sentence of a later line when none came before it.
    """
    text = unicodedata.normalize("NFC", text)
    sentences: list[str] = []
    carried = ""  # bare replies on lines before the first sentence
    for line in re.split(r"\n+", text):
        pending, carried = ("" if sentences else carried), ""
        for cjk_piece in _split_keep(line.strip(), _CJK_END):
            for piece in _split_latin(cjk_piece):
                piece = piece.strip()
                if not piece:
                    continue
                if states_nothing(piece):
                    pending = f"{pending} {piece}".strip()
                    continue
                sentences.append(f"{pending} {piece}" if pending else piece)
                pending = ""
        if pending and sentences:
            sentences[-1] = f"{sentences[-1]} {pending}"
        elif _LETTER.search(pending):
            carried = pending
    if not sentences and (carried or _DIGIT.search(text)):
        # a text that is only a number ("1994") or a reply ("Yes.") still states something
        return [text.strip()]
    return sentences


def _split_keep(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split after each match of `pattern`, keeping the matched punctuation with its sentence."""
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        # "3.5" or "!?" runs: only split where the punctuation ends a CJK sentence
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [p for p in pieces if p.strip()]


# What a terminal would act on rather than show: C0 and C1 control characters (ESC starts
# every escape sequence; CSI, OSC and DCS also have one-character C1 forms), DEL, the bidi
# overrides and isolates that reorder what is shown, and the line and paragraph separators.
# The bytes of a file name that is not UTF-8 reach Python as lone surrogates
# (surrogateescape), which no terminal encoding can write.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
_UNPRINTABLE_KEEP_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # a byte of a name that is not UTF-8
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_lines: bool = False) -> str:
    """`text` with everything a terminal would act on written as a visible escape (ESC as
    `\\x1b`, a byte of a non-UTF-8 file name as `\\xff`, a bidi override as `\\u202e`);
    newlines and tabs too, unless `keep_lines` (for whole messages of several lines)."""
    pattern = _UNPRINTABLE_KEEP_LINES if keep_lines else _UNPRINTABLE
    return pattern.sub(_escape, text)


def neutralised(text: str) -> str:
    """`text` for a page or a comment (the HTML report, the review page, Markdown): each
    control or format character, which could hide or reorder what is shown around it (a
    bidi override U+202E, an ESC, a NUL, an invisible tag), as U+FFFD, so that a reader
    sees the text in the order the judge read it; tabs and line breaks are kept."""
    return "".join(
        "\ufffd" if c not in "\t\n\r" and unicodedata.category(c) in ("Cc", "Cf") else c
        for c in text
    )


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun in the number it takes: "1 verdict", "2 verdicts" (`plural` where
    adding an s is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def all_gates_pass(n: int) -> str:
    """The headline of a run whose `n` gates all pass."""
    return "the quality gate passes" if n == 1 else f"all {n} quality gates pass"
