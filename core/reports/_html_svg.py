"""The plots of report.html, drawn as inline SVG: values, differences, states, calibration.

Colours: models take :data:`MODEL_COLOURS` in order, states :data:`STATE_COLOURS`; the two
sets share no colour and stay apart for the three kinds of colour blindness (the smallest
CIEDE2000 distance between a model and a state colour, and between two model colours, is
above 11 for normal, deutan, protan and tritan vision; the states are Okabe and Ito's
bluish green, a brick red, Tol's amber and a grey, the models Okabe and Ito's blue and
reddish purple, an indigo, Tol's olive, black and a grey darker than skip's).

Every axis is scaled to the numbers it shows and says which way is better.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs

from ._html_markup import esc
from ._html_numbers import interval, number

__all__ = [
    "MODEL_COLOURS",
    "STATE_COLOURS",
    "Bin",
    "Point",
    "dot_plot",
    "forest_plot",
    "model_colours",
    "reliability_diagram",
    "state_bar",
    "strip",
    "strip_span",
    "svg_tag",
]

#: The models' colours, in order (a seventh model takes the first again).
MODEL_COLOURS: tuple[str, ...] = ("#0072B2", "#CC79A7", "#4B0092", "#999933", "#000000", "#666666")
#: The four states' colours.
STATE_COLOURS: Mapping[str, str] = {
    "ok": "#009E73",
    "fail": "#C0392B",
    "skip": "#BBBBBB",
    "error": "#FFB000",
}
_GRID, _AXIS, _MUTED = "#e5e5e5", "#999", "#666"


def model_colours(models: Sequence[str | None]) -> dict[str | None, str]:
    """Each model's colour, by its place in ``models``."""
    return {model: MODEL_COLOURS[i % len(MODEL_COLOURS)] for i, model in enumerate(models)}


@attrs.frozen
class Point:
    """One row of a plot: a name, its colour, a value with its interval, or a note instead."""

    #: The row's label.
    name: str
    #: The colour of its dot and bar.
    colour: str
    #: The value (``None``: the note is shown instead).
    value: float | None
    #: Lower end of the interval.
    low: float | None = None
    #: Upper end of the interval.
    high: float | None = None
    #: Shown instead of a dot when there is no value (``error``, ``no value``).
    note: str = ""
    #: Drawn solid (a significant difference) or hollow.
    solid: bool = True


def strip_span(
    points: Sequence[Point], bounds: tuple[float, float] | None = None, *, zero: bool = False
) -> tuple[float, float]:
    """The axis spanning ``points`` (and 0: ``zero``), never past ``bounds``.

    The :func:`strip` rows of one table share one.
    """
    values = [
        v for p in points for v in (p.value, p.low, p.high) if v is not None and math.isfinite(v)
    ]
    if zero:
        values.append(0.0)
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if high == low:
        pad = abs(high) * 0.1 or 0.5
        low, high = low - pad, high + pad
    else:
        pad = (high - low) * 0.06
        low, high = low - pad, high + pad
    if bounds is not None:  # never past what the metric can take
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return low, high


def _ticks(low: float, high: float) -> tuple[list[float], int]:
    """Round tick values covering ``[low, high]``, and the decimals that write them."""
    raw = (high - low) / 6
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if step / power == 2.5 else 0))
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + step * 1e-9:
        ticks.append(k * step)
        k += 1
    return ticks, decimals


class _Axis:
    """A horizontal scale from values to x positions, with its ticks."""

    def __init__(self, low: float, high: float, left: float, width: float) -> None:
        self.low, self.high, self.left, self.width = low, high, left, width
        self.ticks, self.decimals = _ticks(low, high)

    def x(self, value: float) -> float:
        share = (value - self.low) / ((self.high - self.low) or 1.0)
        return self.left + min(max(share, -0.02), 1.02) * self.width

    def draw(self, top: float, bottom: float) -> list[str]:
        out = []
        for tick in self.ticks:
            tx = self.x(tick)
            out.append(
                f'<line x1="{tx:.1f}" y1="{top:.1f}" x2="{tx:.1f}" y2="{bottom:.1f}" '
                f'stroke="{_GRID}"/><text x="{tx:.1f}" y="{bottom + 14:.1f}" '
                f'text-anchor="middle" fill="{_MUTED}">{tick:.{self.decimals}f}</text>'
            )
        return out


def svg_tag(width: float, height: float, label: str, css: str = "plot") -> str:
    """The opening ``<svg>`` tag of an image ``label`` names (escaped), of class ``css``."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{esc(label)}" '
        f'class="{css}">'
    )


def _mark(axis: _Axis, p: Point, y: float, size: float = 1.0) -> list[str]:
    """A row's interval bar and dot (hollow when not ``solid``), with its tooltip.

    ``size`` scales the dot and the bar (the one-line plots of table rows are smaller).
    """
    if p.value is None:
        if size < 1:
            return []
        return [
            f'<text x="{axis.left + 6:.1f}" y="{y + 4:.1f}" fill="{_MUTED}">{esc(p.note)}</text>'
        ]
    out = []
    if p.low is not None and p.high is not None:
        out.append(
            f'<line x1="{axis.x(p.low):.1f}" y1="{y:.1f}" x2="{axis.x(p.high):.1f}" '
            f'y2="{y:.1f}" stroke="{p.colour}" stroke-width="{2.5 * size:.2g}"/>'
        )
    fill = p.colour if p.solid else "#fff"
    out.append(
        f'<circle cx="{axis.x(p.value):.1f}" cy="{y:.1f}" r="{5 * size:.2g}" fill="{fill}" '
        f'stroke="{p.colour}" stroke-width="{2 * size:.2g}"><title>{esc(p.name)}: '
        f"{number(p.value, p.low, p.high)} {interval(p.value, p.low, p.high)}</title></circle>"
    )
    return out


def dot_plot(
    points: Sequence[Point],
    title: str,
    *,
    higher_is_better: bool | None,
    bounds: tuple[float, float] | None = None,
) -> str:
    """One row per point: its name, its value as a dot and its interval as a bar.

    The axis spans the points (never past ``bounds``, what the metric can take) and says
    which way is better.
    """
    width, left, right, row_h, top = 720, 200, 120, 24, 10
    axis = _Axis(*strip_span(points, bounds), left, width - left - right)
    bottom = top + row_h * len(points)
    height = bottom + 36
    parts = [svg_tag(width, height, title), *axis.draw(top, bottom)]
    for index, p in enumerate(points):
        y = top + row_h * index + row_h / 2
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{esc(p.name[:40])}</text>'
        )
        parts += _mark(axis, p, y)
        if p.value is not None:
            parts.append(
                f'<text x="{width - right + 10}" y="{y + 4:.1f}">'
                f"{number(p.value, p.low, p.high)}</text>"
            )
    better = {None: "", True: "higher is better →", False: "← lower is better"}[higher_is_better]
    parts.append(
        f'<text x="{left + axis.width:.1f}" y="{height - 4:.1f}" text-anchor="end" '
        f'fill="{_MUTED}" class="direction">{esc(better)}</text></svg>'
    )
    return "".join(parts)


def forest_plot(
    points: Sequence[Point], title: str, *, higher_is_better: bool, baseline_side: str
) -> str:
    """Differences (candidate minus baseline) with their intervals, around a line at zero.

    The caption under the axis names the side each direction favours, so that a rise of a
    lower-is-better metric reads as worse. Solid dots are significant after adjustment.
    """
    width, left, right, row_h, top = 720, 260, 40, 24, 10
    axis = _Axis(*strip_span(points, zero=True), left, width - left - right)
    bottom = top + row_h * len(points)
    height = bottom + 36
    parts = [svg_tag(width, height, title, "plot forest"), *axis.draw(top, bottom)]
    zero = axis.x(0.0)
    parts.append(
        f'<line x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" y2="{bottom + 2:.1f}" '
        f'stroke="{_AXIS}" stroke-dasharray="3 3"/>'
    )
    for index, p in enumerate(points):
        y = top + row_h * index + row_h / 2
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{esc(p.name[:48])}</text>'
        )
        parts += _mark(axis, p, y)
    up, down = ("candidate", baseline_side) if higher_is_better else (baseline_side, "candidate")
    parts.append(
        f'<text x="{left}" y="{height - 4:.1f}" fill="{_MUTED}" class="direction">'
        f"← {esc(down)} better</text>"
        f'<text x="{left + axis.width:.1f}" y="{height - 4:.1f}" text-anchor="end" '
        f'fill="{_MUTED}" class="direction">{esc(up)} better →</text></svg>'
    )
    return "".join(parts)


def strip(points: Sequence[Point], low: float, high: float, *, zero: bool = False) -> str:
    """A one-line plot for a table row: every point on the axis ``[low, high]``, no labels.

    With ``zero``, a dashed line marks 0 (for differences).
    """
    width, pad = 180, 8
    axis = _Axis(low, high, pad, width - 2 * pad)
    parts = [svg_tag(width, 16, "values and intervals", "strip")]
    parts.append(f'<line x1="{pad}" y1="8" x2="{width - pad}" y2="8" stroke="{_GRID}"/>')
    if zero and low <= 0 <= high:
        parts.append(
            f'<line x1="{axis.x(0.0):.1f}" y1="1" x2="{axis.x(0.0):.1f}" y2="15" '
            f'stroke="{_AXIS}" stroke-dasharray="2 2"/>'
        )
    for p in points:
        parts += _mark(axis, p, 8.0, size=0.7)
    parts.append("</svg>")
    return "".join(parts)


def state_bar(counts: Mapping[str, int]) -> str:
    """A stacked bar of the four states' counts, each part with its count as a tooltip."""
    total = sum(counts.values()) or 1
    x, parts = 0.0, [svg_tag(160, 12, "items by state", "states")]
    for state, colour in STATE_COLOURS.items():
        count = counts.get(state, 0)
        w = 160 * count / total
        if w:
            parts.append(
                f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="12" fill="{colour}">'
                f"<title>{state}: {count}</title></rect>"
            )
        x += w
    parts.append("</svg>")
    return "".join(parts)


@attrs.frozen
class Bin:
    """One bin of a reliability diagram."""

    #: Lowest confidence the bin holds.
    lower: float | None
    #: Highest confidence the bin holds.
    upper: float | None
    #: Items in the bin.
    count: int
    #: Their mean confidence (``None`` when the bin is empty).
    confidence: float | None
    #: Their accuracy (``None`` when the bin is empty).
    accuracy: float | None


def reliability_diagram(series: Sequence[tuple[str, str, Sequence[Bin]]], title: str) -> str:
    """Accuracy against mean confidence per bin, one line per model, the diagonal for reference.

    A dot's area follows its bin's item count; its tooltip gives the bin's range and numbers.
    """
    size, left, bottom_pad, top = 300, 44, 40, 10
    width, height = left + size + 20, top + size + bottom_pad
    largest = max((b.count for _, _, bins in series for b in bins), default=1) or 1

    def px(v: float) -> float:
        return left + v * size

    def py(v: float) -> float:
        return top + (1 - v) * size

    parts = [svg_tag(width, height, title, "plot reliability")]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{px(tick):.1f}" y1="{top}" x2="{px(tick):.1f}" y2="{top + size}" '
            f'stroke="{_GRID}"/><line x1="{left}" y1="{py(tick):.1f}" x2="{left + size}" '
            f'y2="{py(tick):.1f}" stroke="{_GRID}"/>'
            f'<text x="{px(tick):.1f}" y="{top + size + 14}" text-anchor="middle" '
            f'fill="{_MUTED}">{tick:g}</text><text x="{left - 6}" y="{py(tick) + 4:.1f}" '
            f'text-anchor="end" fill="{_MUTED}">{tick:g}</text>'
        )
    parts.append(
        f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(1)}" y2="{py(1)}" stroke="{_AXIS}" '
        'stroke-dasharray="4 3"><title>perfect calibration</title></line>'
        f'<text x="{left + size / 2}" y="{height - 6}" text-anchor="middle" fill="{_MUTED}">'
        "mean confidence in the bin</text>"
        f'<text x="12" y="{top + size / 2}" text-anchor="middle" fill="{_MUTED}" '
        f'transform="rotate(-90 12 {top + size / 2})">accuracy</text>'
    )
    for name, colour, bins in series:
        filled = [b for b in bins if b.confidence is not None and b.accuracy is not None]
        line = " ".join(f"{px(b.confidence):.1f},{py(b.accuracy):.1f}" for b in filled)  # type: ignore[arg-type]
        if line:
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for b in filled:
            assert b.confidence is not None
            assert b.accuracy is not None
            r = 2.5 + 5.5 * math.sqrt(b.count / largest)
            span = (
                f"[{b.lower:.3g}, {b.upper:.3g}]"
                if b.lower is not None and b.upper is not None
                else ""
            )
            parts.append(
                f'<circle cx="{px(b.confidence):.1f}" cy="{py(b.accuracy):.1f}" r="{r:.1f}" '
                f'fill="{colour}" fill-opacity="0.75"><title>{esc(name)}: bin {span}, '
                f"{b.count} items, confidence {b.confidence:.3f}, accuracy {b.accuracy:.3f}"
                "</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)
