"""The YAML dialect of configuration files and ``-m`` values: safe, YAML 1.2 scalars, no aliases.

A configuration is data someone else may have written (see docs/security.md), so the loader
accepts plain YAML only:

- YAML 1.2 scalars: ``true``/``false`` are booleans, ``yes``/``no``/``on``/``off`` and dates
  stay text, ``010`` is text (not octal).
- No aliases (``*name``): a few hundred bytes of nested aliases expand to gigabytes (the
  "billion laughs"); a configuration never needs them.
- No tags beyond the plain types (``!!python/object``, ``!!binary``...): the safe loader would
  refuse them later, without the file's name.
- Nesting at most :data:`MAX_DEPTH` deep, so that 100,000 ``[`` are an error, not a
  ``RecursionError``.

Each refusal is a ``yaml.MarkedYAMLError`` carrying the line and column, so that callers report
it like any syntax error.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_DEPTH", "PLAIN_TAGS", "loader_class", "node_value"]

#: How deep mappings and lists may nest in a configuration.
MAX_DEPTH = 50
#: The tags a configuration may hold, written or implied.
PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")
)


@functools.cache
def loader_class() -> type[yaml.SafeLoader]:
    """The loader class (built on first use: PyYAML is imported only by commands reading YAML)."""
    import yaml
    from yaml.events import AliasEvent, CollectionStartEvent

    class Refused(yaml.MarkedYAMLError):
        """A construct the configuration dialect refuses."""

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, AliasEvent):
                raise Refused(
                    problem=f"an alias (*{event.anchor}) is not allowed in an itemscore "
                    "configuration; write the value out",
                    problem_mark=event.start_mark,  # type: ignore[arg-type]
                )
            nested = isinstance(event, CollectionStartEvent)
            if nested:
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    raise Refused(
                        problem=f"the values nest more than {MAX_DEPTH} levels deep",
                        problem_mark=event.start_mark,
                    )
            try:
                node = super().compose_node(parent, index)
            finally:
                if nested:
                    self.depth -= 1
            if node is not None and node.tag not in PLAIN_TAGS:
                raise Refused(
                    problem=f"the tag {_short_tag(node.tag)!r} is not allowed in an itemscore "
                    "configuration (only plain text, numbers, booleans, lists and mappings)",
                    problem_mark=node.start_mark,
                )
            return node

    replaced = {
        f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "timestamp", "value")
    }
    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in replaced]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789")
    )
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?[0-9]+[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+0123456789."),
    )
    return Loader


def _short_tag(tag: str) -> str:
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix) :] if tag.startswith(prefix) else tag


def node_value(node: yaml.Node) -> Any:
    """The Python value of a node the loader composed (plain types only, so this cannot fail)."""
    loader = loader_class()("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()
