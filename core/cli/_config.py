"""Reading a YAML run configuration into a :class:`RunRequest`, node by node.

The reader checks the file's shape (known keys, each once, values of the right kind) and keeps
the line and column of every metric, option and setting. The rules about the values themselves
(labels distinct, options a metric accepts, confidence in (0, 1), interval methods) are the
library's: the pipeline applies them once and reports a failure at the place the request kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemscore._exceptions import ConfigError, did_you_mean, one_of
from itemscore._spec import MetricSpec
from itemscore.executors import cluster_flags

from ._grammar import parse_metric_spec
from ._request import MetricEntry, RunRequest
from ._yaml import loader_class, node_value

if TYPE_CHECKING:
    import yaml

__all__ = ["CONFIG_KEYS", "load_config"]

#: The keys of a run configuration file.
CONFIG_KEYS: tuple[str, ...] = (
    "suite",
    "data",
    "format",
    "columns",
    "read_options",
    "answer_delimiter",
    "null_output",
    "metrics",
    "extra_metrics",
    "ci_method",
    "confidence",
    "seed",
    "workers",
    "executor",
    *cluster_flags(),
    "retries",
    "item_timeout",
    "worker_memory",
    "deadline",
    "reduce",
    "out",
    "reports",
    "by_group",
)


def load_config(path: str | os.PathLike[str]) -> RunRequest:
    """Read and check the shape of a run configuration file (see ``docs/cli.md`` for its keys).

    Raises:
        ConfigError: an unknown key, a value of the wrong kind, an alias, a tag or a YAML
            syntax error; the message names the file, line and column.
        InputError: the file is not UTF-8.
    """
    return _Reader(Path(path)).read()


class _Reader:
    def __init__(self, path: Path, keys: tuple[str, ...] = CONFIG_KEYS) -> None:
        self.path = path
        self.name = os.fspath(path)
        self.folder = path.parent
        self.keys = keys

    def at(self, node: yaml.Node) -> str:
        mark = node.start_mark
        return f"{self.name}:{mark.line + 1}:{mark.column + 1}"

    def fail(self, node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(f"{self.at(node)}: {message}")

    def text(self, key: str, node: yaml.Node) -> str:
        value = node_value(node)
        if not isinstance(value, str) or not value:
            raise self.fail(node, f"`{key}` must be a non-empty text, not {_yaml_kind(value)}.")
        return value

    def read(self) -> RunRequest:
        import yaml

        from itemscore.inputs import decode

        text = decode(self.path.read_bytes(), self.name)
        loader = loader_class()(text)
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{self.name}:{mark.line + 1}:{mark.column + 1}" if mark else self.name
            problem = exc.problem or exc.context or "a syntax error"
            raise ConfigError(f"{where}: not valid YAML: {problem}.") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.name}: not valid YAML: {exc}.") from None
        finally:
            loader.dispose()
        if root is None:
            raise ConfigError(
                f"{self.name}:1:1: the configuration is empty; it needs at least `data` and "
                "`metrics` (or a `suite` with bound metrics)."
            )
        if not isinstance(root, yaml.MappingNode):
            raise self.fail(
                root, "the configuration must be a mapping of keys (data, metrics, ...)."
            )
        seen: dict[str, yaml.Node] = {}
        for key_node, _ in root.value:
            if not isinstance(key_node, yaml.ScalarNode):
                kind = "a mapping" if isinstance(key_node, yaml.MappingNode) else "a list"
                raise self.fail(
                    key_node,
                    f"a key must be a plain name, not {kind}. Valid keys: {', '.join(self.keys)}.",
                )
            key = key_node.value
            if key not in self.keys:
                raise self.fail(
                    key_node,
                    f"unknown key {key!r}.{did_you_mean(key, self.keys)} "
                    f"Valid keys: {', '.join(self.keys)}.",
                )
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise self.fail(
                    key_node, f"the key `{key}` is given twice (first on line {first})."
                )
            seen[key] = key_node
        request = RunRequest(source=self.name, config=self.path)
        for key_node, node in root.value:  # names first: a typo is reported before any value
            request.setting_where[key_node.value] = self.at(node)
            self.read_key(request, key_node.value, node)
        return request

    def read_key(self, request: RunRequest, key: str, node: yaml.Node) -> None:
        import yaml

        if key in ("suite", "answer_delimiter", "null_output", "ci_method", "executor"):
            setattr(request, key, self.text(key, node))
        elif key in cluster_flags():
            request.clusters[key] = self.text(key, node)
        elif key == "data":
            from itemscore.inputs._fs import is_url

            text = self.text(key, node)
            if is_url(text):  # read by the workers, through fsspec
                request.data = request.data_name = text
                return
            request.data = self.folder / text
            request.data_name = os.fspath(request.data)
            if not request.data.is_file():
                raise self.fail(
                    node,
                    f"`data` names {request.data_name}, which is not a file (paths are relative "
                    "to the configuration file's folder).",
                )
        elif key == "format":
            from itemscore.inputs import FORMATS

            value = self.text(key, node)
            if value not in FORMATS:
                raise self.fail(
                    node,
                    f"`format` ({value!r}) must be one of {one_of(FORMATS)}."
                    f"{did_you_mean(value, FORMATS)}",
                )
            request.format = value
        elif key == "columns":
            from itemscore.inputs import ROLES

            if not isinstance(node, yaml.MappingNode):
                raise self.fail(
                    node, "`columns` must map roles to column names, e.g. output: response."
                )
            for role_node, column_node in node.value:
                role = node_value(role_node)
                if role not in ROLES:
                    raise self.fail(
                        role_node,
                        f"{role!r} is not a column role; roles are {one_of(ROLES)}."
                        f"{did_you_mean(str(role), ROLES)}",
                    )
                request.columns[role] = self.text(f"columns.{role}", column_node)
                request.setting_where[f"columns.{role}"] = self.at(column_node)
        elif key == "read_options":
            if not isinstance(node, yaml.MappingNode):
                raise self.fail(
                    node,
                    "`read_options` must map the reader's options to texts, e.g. scorer: match.",
                )
            for option_node, value_node in node.value:
                option = node_value(option_node)
                if not isinstance(option, str) or not option:
                    raise self.fail(option_node, "a reader option's name must be a text.")
                request.read_options[option] = self.text(f"read_options.{option}", value_node)
                request.setting_where[f"read_options.{option}"] = self.at(option_node)
        elif key in ("metrics", "extra_metrics"):
            getattr(request, key).extend(self.metric_list(key, node))
        elif key in (
            "confidence", "seed", "workers", "retries", "item_timeout", "worker_memory",
            "deadline",
        ):  # fmt: skip
            # Checked by the library's RunSettings; the pipeline reports it at this node.
            setattr(request, key, node_value(node))
        elif key == "reduce":
            request.reduce = self.reduce_list(node)
        elif key == "by_group":
            value = node_value(node)
            if not isinstance(value, bool):
                raise self.fail(node, f"`by_group` ({value!r}) must be true or false.")
            request.by_group = value
        elif key == "out":
            request.out = self.folder / self.text(key, node)
        elif key == "reports":
            request.reports = self.report_list(node)

    def reduce_list(self, node: yaml.Node) -> str | list[str]:
        """``reduce:`` as a name or a list of names (the library checks the names)."""
        import yaml

        if isinstance(node, yaml.SequenceNode):
            return [self.text("reduce", entry) for entry in node.value]
        return self.text("reduce", node)

    def metric_list(self, key: str, node: yaml.Node) -> list[MetricEntry]:
        import yaml

        entries = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out = []
        for entry in entries:
            value = node_value(entry)
            try:
                if isinstance(value, str):
                    spec = parse_metric_spec(value)
                elif isinstance(value, Mapping):
                    spec = MetricSpec.parse(value)
                else:
                    raise ConfigError(
                        f"each entry of `{key}` must be a metric name or a mapping with a "
                        f"`name`, not {_yaml_kind(value)}"
                    )
            except ConfigError as exc:
                raise self.fail(entry, str(exc)) from None
            out.append(self.entry(spec, entry))
        return out

    def entry(self, spec: MetricSpec, node: yaml.Node) -> MetricEntry:
        import yaml

        name_where = None
        option_where: dict[str, str] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == "name":
                    name_where = self.at(value_node)
                elif key_node.value == "options" and isinstance(value_node, yaml.MappingNode):
                    for option_node, _ in value_node.value:
                        option_where[str(option_node.value)] = self.at(option_node)
                elif key_node.value != "label":
                    option_where[str(key_node.value)] = self.at(key_node)
        return MetricEntry(spec, self.at(node), name_where, option_where)

    def report_list(self, node: yaml.Node) -> list[str]:
        import yaml

        from itemscore.reports import available_formats

        entries = node.value if isinstance(node, yaml.SequenceNode) else [node]
        known = available_formats()
        names = []
        for entry in entries:
            name = self.text("reports", entry)
            if name not in known:
                raise self.fail(
                    entry,
                    f"the report format {name!r} is not known; use one of {one_of(known)}."
                    f"{did_you_mean(name, known)}",
                )
            names.append(name)
        return names


def _yaml_kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "an empty text"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"
