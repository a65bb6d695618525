"""Text from the data, made safe to show: visible escapes for what a reader must not execute.

Every string a report shows (model, group, label, suite id, reason, output) comes from data
files or plugins, which itemscore does not trust (see ``docs/security.md``). Each report escapes
for its own syntax; these helpers do the part they share: characters that are not text,
and Markdown's escapes, which ``results.md``, ``leaderboard.md`` and ``to_markdown`` share.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

__all__ = ["md_escape", "md_table", "md_text", "one_line", "printable", "visible"]

# Lone surrogates cannot be encoded in UTF-8: a writer would crash on them.
_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 and C1 controls (escape sequences, bells, backspaces), DEL, and the bidirectional
# overrides and isolates that reorder what a terminal shows ("Trojan Source").
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LINE_BREAK = re.compile("[\r\n\t\v\f\x1c-\x1e\x85\u2028\u2029]+")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""``text`` with every lone surrogate written as its escape (``\ud800``).

    Example:
        >>> visible("a\ud800b")
        'a\\ud800b'
    """
    if text.isascii():
        return text
    return _SURROGATE.sub(_escape, text)


def printable(text: str) -> str:
    r"""``text`` with controls, bidirectional overrides and lone surrogates as visible escapes.

    For terminals and one-line cells: ``\x1b[2J`` shows as the text ``\x1b[2J`` and never
    clears the screen; a newline shows as ``\x0a``.

    Example:
        >>> printable("a\x1b[2Jb")
        'a\\x1b[2Jb'
    """
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    return _UNPRINTABLE.sub(_escape, text)


def one_line(text: str) -> str:
    r"""``text`` with line breaks and tabs as one space, then :func:`printable`.

    For table cells in typeset documents, where a blank line would end the table.

    Example:
        >>> one_line("a\n\nb\tc")
        'a b c'
    """
    if text.isascii() and text.isprintable():  # no line break, nothing to escape
        return text
    return printable(_LINE_BREAK.sub(" ", text))


def md_escape(text: str, brackets: bool = True) -> str:
    r"""``text`` as Markdown table text: ``\`` and ``|`` escaped, ``& < >`` as entities.

    So no text makes HTML or opens a new cell; with ``brackets``, ``[`` and ``]`` are escaped
    too, so none makes a link or an image that loads from elsewhere. Line breaks are the
    caller's (:func:`md_text` makes one line).
    """
    text = html.escape(text.replace("\\", "\\\\").replace("|", "\\|"), quote=False)
    return text.replace("[", "\\[").replace("]", "\\]") if brackets else text


def md_text(text: str, brackets: bool = True) -> str:
    r"""Text from the data for one table cell or note: shown as it is, never read as markup.

    One line; ``\``, ``|``, ``[`` and ``]`` escaped; ``&``, ``<`` and ``>`` as entities.
    ``brackets=False`` leaves ``[`` and ``]`` plain (an interval's numbers).

    Example:
        >>> md_text("a|b\n<img src=x>[x](y)")
        'a\\|b &lt;img src=x&gt;\\[x\\](y)'
    """
    escaped = md_escape(one_line(text), brackets)
    # GFM reads any backslash right before a pipe as escaping it: a text ending in an
    # (escaped) backslash would swallow the pipe that ends its cell. The entity shows the same.
    return escaped[:-2] + "&#92;" if escaped.endswith("\\\\") else escaped


def md_table(
    header: Sequence[str], align: str, rows: Iterable[Sequence[str]], pad: str = ""
) -> list[str]:
    """The lines of a Markdown table: ``header``, the ``align`` row (``--:|---``), ``rows``.

    Cells are written as given (text from the data escaped first, :func:`md_text`), with
    ``pad`` either side of each.
    """

    def line(cells: Sequence[str]) -> str:
        return f"|{pad}" + f"{pad}|{pad}".join(cells) + f"{pad}|"

    return [line(header), f"|{align}|", *map(line, rows)]
