"""``results.xlsx``: a Summary sheet (as ``summary.csv``) and the items, written directly.

The workbook is written as its XML parts into a zip archive, streamed row by row: no
spreadsheet library is needed, and a million items take seconds. Every text is an inline
string cell, so no text from the data can ever become a formula, in the header or anywhere
else. Characters XML cannot hold (controls, lone surrogates) are shown as visible escapes;
texts are cut at Excel's limit of 32,767 characters.

Excel opens at most 1,048,576 rows a sheet: the items continue on ``Outputs (2)``,
``Outputs (3)``..., each with the header row.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .._records import ItemResult
from .._result import RunResult
from ._rows import STATUS_NAMES, Score, score_rows
from ._summary import SUMMARY_COLUMNS, summary_rows

__all__ = ["FILENAME", "MAX_ROWS", "write"]

#: The file this format writes.
FILENAME = "results.xlsx"
#: Excel's row limit per sheet (the header included).
MAX_ROWS = 1_048_576
_MAX_CELL = 32_767  # Excel's limit on the characters of one cell
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")

# Cell styles (indexes into cellXfs below).
_HEADER, _DECIMAL, _INTEGER, _PERCENT = 1, 2, 3, 4
_STYLES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
<numFmts count="1"><numFmt numFmtId="164" formatCode="0.0000"/></numFmts>
<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>
<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>
<fills count="3"><fill><patternFill patternType="none"/></fill>
<fill><patternFill patternType="gray125"/></fill>
<fill><patternFill patternType="solid"><fgColor rgb="FFD9E1F2"/><bgColor indexed="64"/>\
</patternFill></fill></fills>
<borders count="2"><border><left/><right/><top/><bottom/><diagonal/></border>
<border><left/><right/><top/><bottom style="thin"><color auto="1"/></bottom><diagonal/></border>\
</borders>
<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>
<xf numFmtId="0" fontId="1" fillId="2" borderId="1" xfId="0" applyFont="1" applyFill="1" \
applyBorder="1"/>
<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>
<xf numFmtId="1" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>
<xf numFmtId="9" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>
<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>
</styleSheet>"""
_NS = (
    'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def _entry(name: str) -> zipfile.ZipInfo:
    """An archive entry with a fixed date: the same run gives the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    # The fastest level: the sheets are large. (Python 3.13 names it compress_level.)
    info._compresslevel = 1  # type: ignore[attr-defined]
    return info


def _column_letters(count: int) -> list[str]:
    letters = []
    for index in range(count):
        name, n = "", index + 1
        while n:
            n, rest = divmod(n - 1, 26)
            name = chr(65 + rest) + name
        letters.append(name)
    return letters


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _text(value: str) -> str:
    """``value`` as the content of an XML text node, cut at Excel's cell limit."""
    if not value.isascii() or not value.isprintable():
        value = _NOT_XML.sub(_escape, value)
    value = value[:_MAX_CELL]
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(ref: str, value: Any, style: int) -> str:
    if value is None:
        return ""
    s = f' s="{style}"' if style else ""
    if isinstance(value, bool):
        return f'<c r="{ref}" t="b"{s}><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        return f'<c r="{ref}"{s}><v>{value!r}</v></c>'
    text = _text(str(value))
    return f'<c r="{ref}" t="inlineStr"{s}><is><t xml:space="preserve">{text}</t></is></c>'


class _Sheet:
    """One worksheet being streamed into the archive."""

    def __init__(self, book: zipfile.ZipFile, index: int, widths: Sequence[float], big: bool):
        self.handle: IO[bytes] = book.open(f"xl/worksheets/sheet{index}.xml", "w", force_zip64=big)
        self.letters = _column_letters(len(widths))
        self.rows = 0
        cols = "".join(
            f'<col min="{i}" max="{i}" width="{w}" customWidth="1"/>'
            for i, w in enumerate(widths, 1)
        )
        self.handle.write(
            (
                f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet {_NS}>'
                '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" '
                'activePane="bottomLeft" state="frozen"/><selection pane="bottomLeft"/>'
                f"</sheetView></sheetViews><cols>{cols}</cols><sheetData>"
            ).encode()
        )

    def rows_text(self, rows: Iterable[tuple[Sequence[Any], Sequence[int]]]) -> None:
        letters = self.letters
        chunk: list[str] = []
        for values, styles in rows:
            self.rows += 1
            r = self.rows
            cells = "".join(
                _cell(f"{letter}{r}", v, st)
                for letter, v, st in zip(letters, values, styles)
                if v is not None
            )
            chunk.append(f'<row r="{r}">{cells}</row>')
            if len(chunk) >= 2048:
                self.handle.write("".join(chunk).encode("utf-8"))
                chunk.clear()
        self.handle.write("".join(chunk).encode("utf-8"))

    def header(self, values: Sequence[Any], styles: Sequence[int]) -> None:
        self.rows_text([(values, styles)])

    def items(
        self,
        rows: Iterator[tuple[ItemResult, list[tuple[str, Score]]]],
        count: int,
        labels: Sequence[str],
    ) -> None:
        """Up to ``count`` item rows: six texts, then each label's value and status."""
        text_letters = self.letters[:6]
        score_letters = [
            (self.letters[6 + 2 * i], self.letters[7 + 2 * i]) for i in range(len(labels))
        ]
        chunk: list[str] = []
        for _, (item, scores) in zip(range(count), rows):
            self.rows += 1
            r = self.rows
            parts = [f'<row r="{r}">']
            expected = " | ".join(item.expected) if item.expected else None
            texts = (item.id, item.model, item.group, item.input, item.output, expected)
            for letter, text in zip(text_letters, texts):
                if text is not None:
                    parts.append(
                        f'<c r="{letter}{r}" t="inlineStr"><is><t xml:space="preserve">'
                        f"{_text(text)}</t></is></c>"
                    )
            by_label = dict(scores)
            for (value_letter, status_letter), label in zip(score_letters, labels):
                score = by_label.get(label)
                if score is None:
                    continue
                code, value = score[0], score[1]
                if value is not None:
                    parts.append(f'<c r="{value_letter}{r}" s="{_DECIMAL}"><v>{value!r}</v></c>')
                parts.append(
                    f'<c r="{status_letter}{r}" t="inlineStr"><is><t>{STATUS_NAMES[code]}'
                    "</t></is></c>"
                )
            parts.append("</row>")
            chunk.append("".join(parts))
            if len(chunk) >= 2048:
                self.handle.write("".join(chunk).encode("utf-8"))
                chunk.clear()
        self.handle.write("".join(chunk).encode("utf-8"))

    def close(self) -> None:
        self.handle.write(b"</sheetData></worksheet>")
        self.handle.close()


def _summary(result: RunResult) -> Iterator[tuple[list[Any], list[int]]]:
    styles = []
    for column in SUMMARY_COLUMNS:
        if column in ("value", "ci_low", "ci_high"):
            styles.append(_DECIMAL)
        elif column == "confidence":
            styles.append(_PERCENT)
        elif column in ("n", "ok", "fail", "skip", "error", "small_group"):
            styles.append(_INTEGER)
        else:
            styles.append(0)
    yield list(SUMMARY_COLUMNS), [_HEADER] * len(SUMMARY_COLUMNS)
    for row in summary_rows(result):
        yield [row[c] for c in SUMMARY_COLUMNS], styles


def _labels(result: RunResult) -> list[str]:
    labels = list(result.labels)
    seen = set(labels)
    for item in result.items[:1]:
        for label in item.scores:
            if label not in seen:
                labels.append(label)
                seen.add(label)
    return labels


def write(result: RunResult, path: Path, *, max_rows: int = MAX_ROWS) -> None:
    """Write ``results.xlsx`` for ``result`` to ``path``.

    Args:
        result: The run.
        path: Where to write.
        max_rows: Rows per sheet, the header included (Excel's limit; smaller in tests).
    """
    labels = _labels(result)
    header = ["id", "model", "group", "input", "output", "expected"]
    for label in labels:
        header += [label, f"{label} status"]
    header_styles = [_HEADER] * len(header)
    widths = [14.0, 14.0, 12.0, 40.0, 40.0, 24.0] + [12.0, 10.0] * len(labels)
    n_items = len(result.items)
    per_sheet = max_rows - 1
    n_sheets = max(1, -(-n_items // per_sheet))
    names = ["Summary"] + ["Outputs" if i == 0 else f"Outputs ({i + 1})" for i in range(n_sheets)]
    big = n_items > 100_000
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as book:
        summary = _Sheet(
            book, 1, [12.0, 18.0, 14.0, 12.0] + [10.0] * (len(SUMMARY_COLUMNS) - 4), False
        )
        summary.rows_text(_summary(result))
        summary.close()
        rows = score_rows(result)
        for sheet_index in range(n_sheets):
            sheet = _Sheet(book, sheet_index + 2, widths, big)

            sheet.header(header, header_styles)
            sheet.items(rows, per_sheet, labels)
            sheet.close()
        sheets = "".join(
            f'<sheet name="{name}" sheetId="{i}" r:id="rId{i}"/>' for i, name in enumerate(names, 1)
        )
        book.writestr(
            _entry("xl/workbook.xml"),
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook {_NS}>'
            f"<sheets>{sheets}</sheets></workbook>",
        )
        rels = "".join(
            f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
            for i in range(1, len(names) + 1)
        )
        rels += f'<Relationship Id="rId{len(names) + 1}" Type="{_REL}/styles" Target="styles.xml"/>'
        book.writestr(
            _entry("xl/_rels/workbook.xml.rels"),
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
            f'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}'
            "</Relationships>",
        )
        book.writestr(_entry("xl/styles.xml"), _STYLES)
        overrides = "".join(
            f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{_CT}.worksheet+xml"/>'
            for i in range(1, len(names) + 1)
        )
        book.writestr(
            _entry("[Content_Types].xml"),
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types '
            'xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.sheet.main+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{_CT}.styles+xml"/>'
            f"{overrides}</Types>",
        )
        book.writestr(
            _entry("_rels/.rels"),
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
            'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>",
        )
