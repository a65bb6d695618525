"""Numbers written in text, as ``numeric_match`` and the ``last_number`` preset read them.

The grammar, applied after Unicode NFKC (full-width digits become ASCII, ``½`` becomes ``1``,
U+2044 FRACTION SLASH, ``2``):

- an optional sign (``-``, ``+`` or U+2212 MINUS SIGN), only where a number starts: at the
  start of the text or after a character that is neither a letter, a digit nor a ``.``, so the
  ``-`` of ``2023-05`` or ``5-3`` is a hyphen, not a sign;
- digits with optional thousands separators (``1,234,567``: commas every three digits, and
  only then; ``1,2345`` is the two numbers 1 and 2345), an optional decimal part (``3.50``,
  ``.5``) and an optional exponent (``1e-3``);
- or a fraction of two integers, ``3/4`` (also with U+2044 FRACTION SLASH);
- an optional percent sign right after (``60%``, ``60 %``), which leaves the value 60: the
  number as written. Currency signs before and units after (``$5``, ``5kg``, ``5 apples``) are
  not part of the number and are ignored.

Values are exact :class:`fractions.Fraction`, so ``0.1 + 0.2`` problems never arise when
numbers are compared.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from typing import Final, NamedTuple

__all__ = ["Number", "find_numbers", "parse_number"]


class Number(NamedTuple):
    """One number found in a text."""

    #: The number as written (after NFKC), without thousands separators: ``-1234.5``, ``3/4``.
    text: str
    #: Its exact value; a percentage keeps the number written (``60%`` is 60).
    value: Fraction
    #: Whether a percent sign followed it.
    percent: bool


_NUMBER: Final = re.compile(
    r"(?<![\w.])(?P<sign>[-+\u2212])?"
    r"(?:"
    r"(?P<num>\d+)[/\u2044](?P<den>\d+)(?![\d.,]\d)"
    r"|(?P<int>\d{1,3}(?:,\d{3})+(?![\d])|\d+)?(?:\.(?P<frac>\d+))?(?:[eE](?P<exp>[-+]?\d+))?"
    r")"
    r"(?P<percent>\s?%)?"
)


def _normalise(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def find_numbers(text: str) -> list[Number]:
    """Every number of ``text``, in order (see the module docstring for the grammar)."""
    text = _normalise(text)
    out: list[Number] = []
    for match in _NUMBER.finditer(text):
        number = _from_match(match)
        if number is not None:
            out.append(number)
    return out


def _from_match(match: re.Match[str]) -> Number | None:
    sign = match.group("sign")
    negative = sign in ("-", "\u2212")
    percent = match.group("percent") is not None
    if match.group("num") is not None:
        num, den = int(match.group("num")), int(match.group("den"))
        if den == 0:
            return None
        value = Fraction(num, den)
        written = f"{match.group('num')}/{match.group('den')}"
    else:
        whole, frac, exp = match.group("int"), match.group("frac"), match.group("exp")
        if whole is None and frac is None:
            return None  # the empty match, or a lone sign
        digits = (whole or "").replace(",", "")
        value = Fraction(int(digits or "0"))
        written = digits
        if frac is not None:
            value += Fraction(int(frac), 10 ** len(frac))
            written += "." + frac
        if exp is not None:
            power = int(exp)
            if abs(power) > 400:  # no float holds it; an exact value this large helps nobody
                return None
            value *= Fraction(10) ** power
            written += "e" + exp
    if negative:
        value = -value
        written = "-" + written
    if percent:
        written += "%"
    return Number(written, value, percent)


def parse_number(text: str) -> Number | None:
    """The one number of ``text`` (an answer key such as ``"1,234"`` or ``"$5"``), or ``None``.

    ``None`` when ``text`` holds no number or more than one.
    """
    numbers = find_numbers(text)
    return numbers[0] if len(numbers) == 1 else None
