"""``MetricSpec``: a metric named in a configuration, with its label and options."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Union

import attrs

from ._exceptions import ConfigError

__all__ = ["MetricLike", "MetricSpec"]


def _frozen_options(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen
class MetricSpec:
    """A metric by name, with the label of its measurement and its options.

    ``label`` defaults to the metric's id. Labels in one run must be distinct, so a metric
    used twice needs a label.
    """

    #: The metric's id (or entry-point name).
    name: str
    #: The measurement's label; ``None``: the metric's id.
    label: str | None = None
    #: Keyword arguments for the metric's ``__init__``.
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_options)

    @classmethod
    def parse(cls, obj: MetricLike) -> MetricSpec:
        """A spec from a name, a mapping ``{"name": ..., "label": ..., <options>}`` or a spec.

        Options may also be nested under ``"options"``.

        Raises:
            ConfigError: the mapping has no ``name``, or ``obj`` has another type.
        """
        if isinstance(obj, MetricSpec):
            return obj
        if isinstance(obj, str):
            if not obj.strip():
                raise ConfigError("A metric name must not be empty.")
            return cls(obj.strip())
        if isinstance(obj, Mapping):
            data = dict(obj)
            name = data.pop("name", None)
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"A metric given as a mapping needs a `name`, got {dict(obj)!r}; "
                    "write e.g. {'name': 'f1', 'average': 'weighted'}."
                )
            label = data.pop("label", None)
            if label is not None and (not isinstance(label, str) or not label):
                raise ConfigError(f"The `label` of metric {name!r} must be a non-empty string.")
            nested = data.pop("options", None)
            if nested is not None:
                if not isinstance(nested, Mapping):
                    raise ConfigError(f"The `options` of metric {name!r} must be a mapping.")
                data = {**nested, **data}
            return cls(name, label, data)
        raise ConfigError(
            f"A metric must be a name, a mapping or a MetricSpec, not {type(obj).__name__}."
        )

    def to_dict(self) -> dict[str, Any]:
        """The mapping form: ``{"name": ..., "label": ..., <options>}``."""
        out: dict[str, Any] = {"name": self.name}
        if self.label is not None:
            out["label"] = self.label
        out.update(self.options)
        return out


#: Anything that names a metric in ``score``/``run``: a name, a mapping, a spec, a class
#: or a configured instance.
MetricLike = Union[str, Mapping[str, Any], MetricSpec, Any]  # noqa: UP007 - a runtime alias
