"""The bounds every harness-log reader keeps, and the checks of its options.

A harness log is read one sample (one lm-eval line, one ``.eval`` member, one element of a JSON
log's ``samples``) at a time, and no sample may grow past ``max_sample_bytes``; a compressed
member may also not expand more than ``max_ratio`` times its compressed size. Both are reader
options (``--read-option max_sample_bytes=...``), so a log of very long transcripts can still
be read by saying so, while a crafted file cannot make the reader take all memory.
"""

from __future__ import annotations

from .._exceptions import ConfigError, did_you_mean, one_of

__all__ = [
    "LITERAL_CHARS",
    "MAX_RATIO",
    "MAX_SAMPLE_BYTES",
    "RATIO_FLOOR",
    "check_choice",
    "check_limits",
]

#: Largest sample (decompressed, as JSON text) a reader takes: far above real samples (an
#: inspect sample with a long agent transcript is a few MB), far below the memory of a machine.
MAX_SAMPLE_BYTES = 256 * 1024 * 1024
#: Largest expansion of a compressed member. Real inspect samples compress 5 to 50 times;
#: decompression bombs thousands of times.
MAX_RATIO = 1000
#: Members smaller than this are never refused for their ratio: a small sample of repeated
#: text can compress very well and costs nothing.
RATIO_FLOOR = 1024 * 1024
#: Longest target text handed to ``ast.literal_eval`` (lm-eval writes list targets as Python
#: text). The parser's memory grows about 450 times the text (a list of 64 KiB of small
#: numbers peaks near 30 MB), so the text is bounded first; real list targets are far shorter.
LITERAL_CHARS = 64 * 1024


def check_limits(
    max_sample_bytes: int | str, max_ratio: int | str | None = None
) -> tuple[int, int]:
    """The bound options of a reader as numbers (the command line gives them as text).

    Raises:
        ConfigError: a bound that is not a whole number of at least 1.
    """
    return (
        _whole("max_sample_bytes", max_sample_bytes, MAX_SAMPLE_BYTES),
        _whole("max_ratio", MAX_RATIO if max_ratio is None else max_ratio, MAX_RATIO),
    )


def _whole(option: str, value: int | str, default: int) -> int:
    number = value
    if isinstance(value, str) and value.strip().isdecimal():
        number = int(value.strip())
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ConfigError(
            f"`{option}` ({value!r}) must be a whole number of at least 1 (the default is "
            f"{default}); e.g. --read-option {option}={default}."
        )
    return number


def check_choice(option: str, value: object, allowed: tuple[str, ...]) -> None:
    """Refuse a reader option's ``value`` that is not one of ``allowed``.

    Raises:
        ConfigError: naming the option, the value, the choices and the nearest one.
    """
    if value not in allowed:
        raise ConfigError(
            f"`{option}` ({value!r}) must be one of {one_of(allowed)}."
            f"{did_you_mean(str(value), allowed)}"
        )
