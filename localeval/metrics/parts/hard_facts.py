"""Hard facts: numbers, dates, amounts and units a statement gives that its evidence
gives differently, found without the judge.

A small judge often reads "You have 14 days to ask for a refund" against "within 30 days
of purchase" as saying the same thing. A quantity here is a number with its kind ("14
days": a duration in days; "299元": an amount in yuan; "16.2%": a share; "in 2019": a
year; "10月3日", "October 3": a month and a day of the month). A statement's quantity
*conflicts* with the evidence when the evidence states some quantity of the same kind and
none of the same value: "14 days" against a text that says "30 days" and nothing of 14
days. A kind the evidence never mentions is left to the judge (a number written another
way, a fact the evidence does not hold). Values match after rounding the more precise to
the other's decimals ("16%" against "16.2%"). English and Chinese numerals are read as
numbers ("three weeks", "三十天", "两万元", "1.5万").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 10**9}
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_SMALL = {"十": 10, "百": 100, "千": 1_000}
_ZH_LARGE = {"万": 10_000, "亿": 100_000_000}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip

_EN_WORD = "|".join(sorted([*_EN_UNITS, *_EN_SCALES], key=len, reverse=True))
_NUMBER = (
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s?(?P<scale>万|亿|thousand\b|million\b|billion\b))?"
    r"|(?P<zh>[零〇一二两三四五六七八九十百千万亿]+)"
    rf"|\b(?P<en>(?:{_EN_WORD})(?:[\s-]+(?:and[\s-]+)?(?:{_EN_WORD}))*)\b"
)

#: unit words after a number (checked in this order: the longest first where one holds
#: another), and the kind each gives
_AFTER: tuple[tuple[str, str], ...] = (
    (r"个月|months?\b", "duration:month"),
    (r"周|星期|weeks?\b", "duration:week"),
    (r"天|days?\b", "duration:day"),
    (r"小时|hours?\b|hrs?\b", "duration:hour"),
    (r"分钟|minutes?\b|mins?\b", "duration:minute"),
    (r"秒|seconds?\b|secs?\b", "duration:second"),
    (r"years?\s+old\b|岁", "age"),
    (r"年|years?\b", "year-or-duration"),
    (r"月", "month-of-year"),
    (r"日|号", "day-of-month"),
    (r"美元|(?:us\s)?dollars?\b|usd\b", "money:usd"),
    (r"欧元|euros?\b|eur\b", "money:eur"),
    (r"英镑|pounds?\s+sterling\b|gbp\b", "money:gbp"),
    (r"元|块|yuan\b|rmb\b|cny\b", "money:cny"),
    (r"%|％|percent\b|per\s+cent\b", "percent"),
    (r"tb\b|terabytes?\b", "size:tb"),
    (r"gb\b|gigabytes?\b", "size:gb"),
    (r"mb\b|megabytes?\b", "size:mb"),
    (r"kb\b|kilobytes?\b", "size:kb"),
    (r"公里|千米|km\b|kilometres?\b|kilometers?\b", "length:km"),
    (r"miles?\b", "length:mile"),
    (r"厘米|cm\b|centimetres?\b|centimeters?\b", "length:cm"),
    (r"毫米|mm\b|millimetres?\b|millimeters?\b", "length:mm"),
    (r"米|metres?\b|meters?\b", "length:m"),
    (r"公斤|千克|kg\b|kilograms?\b|kilos?\b", "weight:kg"),
    (r"吨|tonnes?\b|tons?\b", "weight:t"),
    (r"人次|人|名|people\b|persons?\b|employees\b|users\b|visitors\b|residents\b", "people"),
    (r"倍|times\b", "times"),
)
_AFTER_RE = [(re.compile(r"\s?(?:" + words + ")", re.IGNORECASE), kind) for words, kind in _AFTER]
_BEFORE = (("$", "money:usd"), ("US$", "money:usd"), ("€", "money:eur"), ("£", "money:gbp"),
           ("¥", "money:cny"), ("￥", "money:cny"), ("百分之", "percent"))  # fmt: skip
_POINT_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+")
_MONTH_DAY = re.compile(
    rf"\b(?P<month>{'|'.join(_MONTHS)}|(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?)"
    r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b"
    rf"|\b(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month2>{'|'.join(_MONTHS)})\b",
    re.IGNORECASE,
)


#: a number and its digits after the point as written (how precise the text is)
Reading = tuple[float, int]


@dataclass(frozen=True)
class Quantity:
    """A number with its kind, as the text wrote it."""

    kind: str
    value: float
    decimals: int
    surface: str
    #: another way to read the digits ("25.000": 25 or, with a point between thousands, 25000)
    other: Reading | None = None

    def readings(self) -> list[Reading]:
        return [(self.value, self.decimals)] + ([self.other] if self.other else [])

    def matches(self, other: Quantity) -> bool:
        return any(
            round(a, min(da, db)) == round(b, min(da, db))
            for a, da in self.readings()
            for b, db in other.readings()
        )


def english_number(words: str) -> float | None:
    """ "twenty-one" → 21, "three hundred thousand" → 300000; None if not a number."""
    total, current, seen = 0, 0, False
    for word in re.split(r"[\s-]+", words.lower()):
        if word == "and" or not word:
            continue
        if word in _EN_UNITS:
            current += _EN_UNITS[word]
        elif word in _EN_SCALES:
            scale = _EN_SCALES[word]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                total, current = total + max(current, 1) * scale, 0
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def chinese_number(text: str) -> float | None:
    """ "三十" → 30, "一百九十九" → 199, "两万" → 20000, "二〇二四" → 2024; None if not one."""
    if not text:
        return None
    if len(text) > 1 and all(ch in _ZH_DIGITS for ch in text):  # read digit by digit
        return float("".join(str(_ZH_DIGITS[ch]) for ch in text))
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_SMALL:
            section += (digit or 1) * _ZH_SMALL[ch]
            digit = 0
        elif ch in _ZH_LARGE:
            total = (total + section + digit) * _ZH_LARGE[ch] if ch == "亿" else total
            if ch == "万":
                total += (section + digit) * _ZH_LARGE[ch]
            section, digit = 0, 0
        else:
            return None
    return float(total + section + digit)


def _number(match: re.Match[str]) -> tuple[Reading, Reading | None] | None:
    """The value of a _NUMBER match with its decimals as written, and another reading of
    its digits where they have one (a point between thousands, as in "€ 25.000")."""
    if match.group("digits"):
        written = match.group("digits")
        digits = written.replace(",", "")
        value = float(digits)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        other = (float(digits.replace(".", "")), 0) if _POINT_THOUSANDS.fullmatch(written) else None
        scale = (match.group("scale") or "").lower()
        if scale:
            factor = {"万": 10_000, "亿": 10**8, **_EN_SCALES}[scale]
            return (value * factor, 0), None
        return (value, decimals), other
    zh, en = match.group("zh"), match.group("en")
    value = chinese_number(zh) if zh else english_number(en or "")
    return ((value, 0), None) if value is not None else None


def _kind_after(text: str, end: int, value: float) -> tuple[str, int] | None:
    for pattern, kind in _AFTER_RE:
        found = pattern.match(text, end)
        if found:
            if kind == "year-or-duration":
                # "2019年" / "in 2019 years"? a number of 1000 or more before 年 is a year
                kind = "year" if value >= 1000 else "duration:year"
            return kind, found.end()
    return None


def quantities(text: str) -> list[Quantity]:
    """Every quantity of a known kind in `text`, in order."""
    found: list[Quantity] = []
    for match in re.finditer(_NUMBER, text, re.IGNORECASE):
        number = _number(match)
        if number is None:
            continue
        (value, decimals), other = number
        start, end = match.span()
        if text[:start].endswith("第"):
            continue  # an ordinal ("第一天": the first day), not an amount
        lead = text[:start].rstrip()
        sign = next(((sign, k) for sign, k in _BEFORE if lead.endswith(sign)), None)
        after = _kind_after(text, end, value)
        if sign is not None:
            kind, surface_end = sign[1], end
            start = len(lead) - len(sign[0])
        elif after is not None:
            kind, surface_end = after
        elif match.group("digits") and re.fullmatch(r"1[5-9]\d\d|20\d\d", match.group("digits")):
            kind, surface_end = "year", end  # a bare four-digit year
        else:
            continue
        found.append(Quantity(kind, value, decimals, text[start:surface_end].strip(), other))
    for match in _MONTH_DAY.finditer(text):
        month = (match.group("month") or match.group("month2")).lower().rstrip(".")
        number = next(i for i, name in enumerate(_MONTHS, start=1) if name.startswith(month))
        day = int(match.group("day") or match.group("day2"))
        found.append(Quantity("month-of-year", number, 0, match.group(0)))
        found.append(Quantity("day-of-month", day, 0, match.group(0)))
    return found


def conflicts(statement: str, evidence: Sequence[str]) -> list[str]:
    """Why the evidence states the statement's quantities differently, one line per
    quantity ("says 14 days; the evidence says 30 days"); [] when it does not."""
    stated = [q for text in evidence for q in quantities(text)]
    reasons: list[str] = []
    for quantity in quantities(statement):
        same_kind = [q for q in stated if q.kind == quantity.kind]
        if same_kind and not any(quantity.matches(q) for q in same_kind):
            others = ", ".join(dict.fromkeys(q.surface for q in same_kind))
            reasons.append(f"says {quantity.surface}; the evidence says {others}")
    return reasons
