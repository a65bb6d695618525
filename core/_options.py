"""Metric options: read from ``__init__`` keyword arguments, checked against their type hints.

Every keyword argument of a metric's ``__init__`` that has a default is an option. Its type hint
says what values it accepts: ``bool``, ``int``, ``float``, ``str``, ``Literal[...]``,
``list[str]``/``tuple[str, ...]``/``Sequence[str]``, ``dict[str, X]``/``Mapping[str, X]``, and
any of these ``| None``. Descriptions come from the ``Args:`` section of the class docstring
(merged along the class hierarchy, so a shared base class documents shared options once).
"""

from __future__ import annotations

import collections.abc
import inspect
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._exceptions import OptionError, did_you_mean, one_of
from ._secrets import mask_secrets, redact_text

__all__ = ["OptionInfo", "check_options", "option_infos"]

_MISSING = inspect.Parameter.empty
_SEQUENCE_ORIGINS = (list, tuple, collections.abc.Sequence, collections.abc.Iterable)
_MAPPING_ORIGINS = (dict, collections.abc.Mapping)


@attrs.frozen(kw_only=True)
class OptionInfo:
    """One option of a metric, as read from its ``__init__`` signature."""

    #: The keyword argument's name.
    name: str
    #: The type hint (a typing object), or ``typing.Any`` when none is given.
    hint: Any
    #: The default value; ``inspect.Parameter.empty`` for a required option.
    default: Any
    #: One line from the class docstring's ``Args:`` section, or "".
    description: str = ""

    @property
    def required(self) -> bool:
        """Whether the option has no default."""
        return self.default is _MISSING

    @property
    def type_name(self) -> str:
        """The hint as a reader would write it: ``'macro' | 'micro'``, ``list of strings``..."""
        return describe_hint(self.hint)

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The allowed values of a ``Literal`` option, else ``None``."""
        hint, _ = _strip_optional(self.hint)
        if typing.get_origin(hint) is Literal:
            return typing.get_args(hint)
        return None


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None`` / ``Optional[X]``, else ``(hint, False)``."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        if len(args) == 1:
            return args[0], optional
        return typing.Union[tuple(args)], optional  # noqa: UP007 - built at run time
    return hint, False


def describe_hint(hint: Any) -> str:
    """A short, human wording of a type hint, for docs and error messages."""
    inner, optional = _strip_optional(hint)
    suffix = " or none" if optional else ""
    origin = typing.get_origin(inner)
    if inner is Any:
        return "any"
    if origin is Literal:
        return ", ".join(f"`{v}`" for v in typing.get_args(inner)) + suffix
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(describe_hint(arm) for arm in typing.get_args(inner)) + suffix
    if origin in _SEQUENCE_ORIGINS:
        args = typing.get_args(inner)
        item = args[0] if args else Any
        return f"list of {_plural(item)}{suffix}"
    if origin in _MAPPING_ORIGINS:
        keys, values = typing.get_args(inner) or (Any, Any)
        return f"mapping of {_plural(keys)} to {_plural(values)}{suffix}"
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if isinstance(inner, type) and inner in names:
        return names[inner] + suffix
    return str(inner).replace("typing.", "") + suffix


def _plural(item: Any) -> str:
    return {str: "strings", int: "integers", float: "numbers", bool: "booleans",
            Any: "values"}.get(item, str(item))  # fmt: skip


_ARGS_HEADER = re.compile(r"^(\s*)(Args|Arguments|Options):\s*$")
_ARG_LINE = re.compile(r"^(\s*)(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _docstring_args(cls: type) -> dict[str, str]:
    """``{name: first line}`` from the ``Args:`` sections along ``cls``'s hierarchy."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        in_args = False
        indent: int | None = None
        for line in doc.splitlines():
            if _ARGS_HEADER.match(line):
                in_args, indent = True, None
                continue
            if not in_args:
                continue
            if line.strip() and not line.startswith((" ", "\t")):
                in_args = False  # the next section began
                continue
            match = _ARG_LINE.match(line)
            if match and (indent is None or len(match.group(1)) == indent):
                indent = len(match.group(1))
                found[match.group(2)] = match.group(3).strip()
            elif match is None and line.strip() and found and indent is not None:
                last = next(reversed(found))
                found[last] = (found[last] + " " + line.strip()).strip()
    return found


def option_infos(cls: type) -> dict[str, OptionInfo]:
    """The options of metric class ``cls``, by name, in signature order."""
    init = cls.__init__  # type: ignore[misc]
    if init is object.__init__:
        return {}
    signature = inspect.signature(init)
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an unresolvable hint only costs the type check
        hints = {}
    docs = _docstring_args(cls)
    infos: dict[str, OptionInfo] = {}
    for name, param in signature.parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        infos[name] = OptionInfo(
            name=name,
            hint=hints.get(name, Any),
            default=param.default,
            description=docs.get(name, ""),
        )
    return infos


def check_options(
    metric_id: str, infos: Mapping[str, OptionInfo], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Check ``given`` against ``infos``; return the values to pass to ``__init__``.

    Raises:
        OptionError: an unknown option (listing the valid ones), a missing required option, or
            a value of the wrong type or outside a ``Literal`` (naming the allowed values).
    """
    checked: dict[str, Any] = {}
    for name, value in given.items():
        info = infos.get(name)
        if info is None:
            valid = ", ".join(f"`{n}`" for n in infos) or "none"
            raise OptionError(
                f"Metric {metric_id!r} has no option `{name}`."
                f"{did_you_mean(name, infos)} Valid options: {valid}.",
                metric_id=metric_id,
                option=name,
                allowed=list(infos),
            )
        try:
            checked[name] = coerce_value(info, value)
        except OptionError as exc:  # name the metric: a run may configure several
            raise OptionError(
                f"Metric {metric_id!r}: {exc}",
                metric_id=metric_id,
                option=exc.option or name,
                allowed=exc.allowed,
            ) from None
    missing = [n for n, info in infos.items() if info.required and n not in checked]
    if missing:
        raise OptionError(
            f"Metric {metric_id!r} needs the option(s) {', '.join(f'`{n}`' for n in missing)}.",
            metric_id=metric_id,
            option=missing[0],
        )
    return checked


def coerce_value(info: OptionInfo, value: Any) -> Any:
    """Check one value against its option's hint; return it, lightly normalised.

    Raises:
        OptionError: the value does not fit the hint.
    """
    hint, optional = _strip_optional(info.hint)
    if value is None:
        if optional or info.default is None or hint is Any:
            return None
        raise _type_error(info, value)
    try:
        return _coerce(info, hint, value)
    except OptionError as exc:
        # The message quotes the value: a credential's (`headers={X-Api-Key: 1234}`) is masked.
        _, secrets = mask_secrets({info.name: value})
        if not secrets:
            raise
        raise OptionError(
            redact_text(str(exc), secrets), option=exc.option, allowed=exc.allowed
        ) from None


def _coerce(info: OptionInfo, hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin is Literal:
        choices = typing.get_args(hint)
        if value in choices and type(value) in {type(c) for c in choices}:
            return value
        suggestion = (
            did_you_mean(value, [str(c) for c in choices]) if isinstance(value, str) else ""
        )
        raise OptionError(
            f"`{info.name}` ({value!r}) must be one of {one_of(choices)}.{suggestion}",
            option=info.name,
            allowed=choices,
        )
    if origin is typing.Union or origin is types.UnionType:
        for arm in typing.get_args(hint):
            try:
                return _coerce(info, arm, value)
            except OptionError:
                continue
        raise _type_error(info, value)
    if origin in _SEQUENCE_ORIGINS:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise _type_error(info, value)
        args = typing.get_args(hint)
        item_hint = args[0] if args else Any
        items = [_coerce(info, item_hint, v) for v in value]
        return tuple(items) if origin is tuple else list(items)
    if origin in _MAPPING_ORIGINS:  # before the `type` test: `dict[str, str]` is one on 3.10
        if not isinstance(value, Mapping):
            raise _type_error(info, value)
        key_hint, value_hint = typing.get_args(hint) or (Any, Any)
        return {_coerce(info, key_hint, k): _coerce(info, value_hint, v) for k, v in value.items()}
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise OptionError(
                    f"`{info.name}` ({value!r}) must be a finite number.", option=info.name
                )
            return float(value)
        raise _type_error(info, value)
    if isinstance(hint, type):
        # A bool is an int to Python, never to an option.
        if isinstance(value, hint) and not (hint is int and isinstance(value, bool)):
            return value
        raise _type_error(info, value)
    return value  # a hint we cannot check at run time: trust the metric


def _type_error(info: OptionInfo, value: Any) -> OptionError:
    kind = type(value).__name__
    return OptionError(
        f"`{info.name}` ({value!r}) must be {_article(info.type_name)}, not {kind}.",
        option=info.name,
        allowed=info.choices,
    )


def _article(type_name: str) -> str:
    if type_name.startswith("`"):
        return "one of " + type_name
    return ("an " if type_name[:1] in "aeiou" else "a ") + type_name
