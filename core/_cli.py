"""The ``itemscore`` command line: ``metrics``, ``score``, ``run``, ``rescore`` and ``demo``.

Exit codes: 0 done; 2 bad usage, configuration or input (one message on stderr naming the file,
line and column at fault, and nothing written); 1 any other failure (one line, the traceback
only with ``--debug`` or ``ITEMSCORE_DEBUG=1``).

Start-up time matters (``itemscore metrics`` is run by hand and by scripts): this module imports
only click and what ``itemscore`` itself already imports; rich, PyYAML, numpy and the runner are
imported inside the commands that need them.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import attrs
import click

from ._exceptions import ConfigError, InputError, did_you_mean, one_of
from ._runner import check_ci_method
from ._spec import MetricSpec
from .inputs import FORMATS, ROLES

if TYPE_CHECKING:
    import yaml

    from ._registry import MetricInfo
    from ._result import RunResult
    from ._suite import Suite

__all__ = ["cli", "load_config", "main", "parse_metric_spec", "yaml_value"]

#: Set to ``1`` to print the traceback of unexpected errors (like ``--debug``).
DEBUG_ENV = "ITEMSCORE_DEBUG"
#: The keys of a run configuration file.
CONFIG_KEYS: tuple[str, ...] = (
    "suite",
    "data",
    "format",
    "columns",
    "answer_delimiter",
    "null_output",
    "metrics",
    "extra_metrics",
    "ci_method",
    "confidence",
    "seed",
    "out",
    "reports",
)

_state = {"debug": False}


def _debug() -> bool:
    return _state["debug"] or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")


# -- errors --------------------------------------------------------------------------------


class _BadInput(click.ClickException):
    """A configuration or input error: exit code 2, one message, no usage text."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        if _debug() and self.__cause__ is not None:
            traceback.print_exception(self.__cause__, file=sys.stderr)
        click.echo(f"Error: {self.format_message()}", err=True)


class _Group(click.Group):
    """A click group that turns itemscore's configuration and input errors into exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ConfigError, InputError) as exc:
            raise _BadInput(str(exc)) from exc


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the command line (the ``itemscore`` console script) and exit with its code."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="itemscore")
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, exit code 1
        if _debug():
            traceback.print_exc()
        message = " ".join(str(exc).split())
        from ._exceptions import ItemscoreError

        if not isinstance(exc, ItemscoreError):
            message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        hint = "" if _debug() else f" (run with --debug or {DEBUG_ENV}=1 for the traceback)"
        click.echo(f"Error: {message}{hint}", err=True)
        sys.exit(1)
    sys.exit(0)  # pragma: no cover - cli.main always exits in standalone mode


# -- the -m grammar and YAML values --------------------------------------------------------

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_LABEL_RE = re.compile(r"[\w.\-]+\Z")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NULL_WORDS = ("null", "Null", "NULL", "~")
_SPEC_EXAMPLE = "-m 'f1@f1_weighted:average=weighted,labels=[positive,negative]'"


@functools.cache
def _yaml_loader() -> type[yaml.SafeLoader]:
    """A safe loader with YAML 1.2 scalars: ``yes``/``no``/``on``/``off`` and dates stay text."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    replaced = {
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
        "tag:yaml.org,2002:value",
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


def yaml_value(text: str) -> Any:
    """Parse one option value as YAML 1.2 flow: ``true``, ``3``, ``0.5``, ``[a, b]``, ``null``.

    Text that YAML would read as nothing (``#x``, a comment) is kept as the text itself.

    Raises:
        ConfigError: the text is not valid YAML (an unclosed bracket or quote).
    """
    import yaml

    try:
        value = yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{text!r} is not valid YAML ({problem})") from None
    if value is None and text.strip() not in _NULL_WORDS:
        return text
    return value


def _split_options(text: str) -> list[str]:
    """Split ``a=1,b=[x,y]`` at the commas outside brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    last = "="  # the last character outside a quote that was not a space
    index = 0
    while index < len(text):
        ch = text[index]
        if quote is not None:
            if ch == "\\" and quote == '"':
                index += 1
            elif ch == quote:
                quote = None
                last = ch
        elif ch in "'\"" and last in "=[{,:":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"there is a {ch!r} without its opening bracket")
        elif ch == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        if quote is None and not ch.isspace():
            last = ch
        index += 1
    if quote is not None:
        raise ConfigError(f"a {quote} quote is not closed")
    if depth > 0:
        raise ConfigError("a '[' or '{' is not closed")
    parts.append(text[start:])
    return parts


def parse_metric_spec(text: str) -> MetricSpec:
    """Parse one ``-m`` value: ``NAME[@LABEL][:KEY=VALUE,KEY=VALUE...]``.

    Values are YAML 1.2 flow values (``true``, ``3``, ``0.5``, ``[a, b]``); commas inside
    brackets or quotes do not separate options.

    Raises:
        ConfigError: a malformed spec; the message quotes it and shows the grammar.
    """

    def bad(why: str) -> ConfigError:
        return ConfigError(
            f"-m {text!r}: {why}. Write NAME[@LABEL][:KEY=VALUE,...], e.g. {_SPEC_EXAMPLE}."
        )

    head, colon, rest = text.partition(":")
    name, at, label = head.partition("@")
    name, label = name.strip(), label.strip()
    if not name:
        raise bad("the metric name is missing")
    if not _NAME_RE.match(name):
        raise bad(f"{name!r} is not a metric name (letters, digits, '_', '-' and '.')")
    if at and not _LABEL_RE.match(label):
        raise bad(f"the label {label!r} must be letters, digits, '_', '-' or '.'")
    options: dict[str, Any] = {}
    if colon:
        if not rest.strip():
            raise bad("nothing follows ':'")
        try:
            parts = _split_options(rest)
        except ConfigError as exc:
            raise bad(str(exc)) from None
        for part in parts:
            key, eq, raw = part.partition("=")
            key, raw = key.strip(), raw.strip()
            if not part.strip():
                raise bad("an option is empty (two commas in a row, or a comma at the end)")
            if not eq:
                raise bad(f"the option {key!r} has no '=' and value")
            if not _KEY_RE.match(key):
                raise bad(f"{key!r} is not an option name")
            if key in options:
                raise bad(f"the option {key!r} is given twice")
            if not raw:
                raise bad(f"the option {key!r} has no value (write {key}=null for none)")
            try:
                options[key] = yaml_value(raw)
            except ConfigError as exc:
                raise bad(f"the value of {key!r}: {exc}; quote it") from None
    return MetricSpec(name, label or None, options)


def _checked_spec(spec: MetricSpec, where: str) -> MetricSpec:
    """Configure ``spec`` once, so an unknown metric or option is reported with ``where``."""
    from ._runner import plan_metrics

    try:
        plan_metrics([spec])
    except ConfigError as exc:
        raise type(exc)(f"{where}: {exc}") from exc
    return spec


def _cli_specs(texts: Iterable[str]) -> list[MetricSpec]:
    return [_checked_spec(parse_metric_spec(t), f"-m {t!r}") for t in texts]


def _extra_specs(texts: Iterable[str]) -> list[MetricSpec]:
    specs = []
    for text in texts:
        for name in text.split(","):
            if name.strip():
                specs.append(_checked_spec(MetricSpec(name.strip()), f"--extra-metrics {text!r}"))
    return specs


# -- the configuration file ----------------------------------------------------------------


@attrs.define
class _Plan:
    """Everything a scoring run needs, from the command line and/or a configuration file."""

    data: Path | None = None
    data_name: str = ""
    format: str | None = None
    columns: dict[str, str] = attrs.field(factory=dict)
    answer_delimiter: str | None = None
    null_output: str | None = None
    suite: str | None = None
    metrics: list[MetricSpec] = attrs.field(factory=list)
    extra_metrics: list[MetricSpec] = attrs.field(factory=list)
    ci_method: str | None = None
    confidence: float | None = None
    seed: int | None = None
    out: Path | None = None
    reports: list[str] | None = None
    source: str = "the command line"


class _ConfigReader:
    """Checks a YAML configuration node by node, so every error names its line and column."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = os.fspath(path)
        self.folder = path.parent
        #: Per metric entry: (source key, label, metric id, options, node), to check labels.
        self.entries: list[tuple[str, str, str, dict[str, Any], yaml.Node]] = []

    def at(self, node: yaml.Node) -> str:
        mark = node.start_mark
        return f"{self.name}:{mark.line + 1}:{mark.column + 1}"

    def fail(self, node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(f"{self.at(node)}: {message}")

    def value(self, node: yaml.Node) -> Any:
        loader = _yaml_loader()("")
        try:
            return loader.construct_object(node, deep=True)
        finally:
            loader.dispose()

    def text(self, key: str, node: yaml.Node) -> str:
        value = self.value(node)
        if not isinstance(value, str) or not value:
            raise self.fail(node, f"`{key}` must be a non-empty text, not {_yaml_kind(value)}.")
        return value

    def path_value(self, key: str, node: yaml.Node) -> Path:
        return self.folder / self.text(key, node)

    def read(self) -> _Plan:
        import yaml

        from .inputs import decode

        text = decode(self.path.read_bytes(), self.name)
        loader = _yaml_loader()(text)
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
        plan = _Plan(source=self.name)
        for key_node, _ in root.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key not in CONFIG_KEYS:
                raise self.fail(
                    key_node,
                    f"unknown key {key!r}.{did_you_mean(str(key), CONFIG_KEYS)} "
                    f"Valid keys: {', '.join(CONFIG_KEYS)}.",
                )
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise self.fail(
                    key_node, f"the key `{key}` is given twice (first on line {first})."
                )
            seen[key] = key_node
        for key_node, node in root.value:  # names first: a typo is reported before any value
            self.read_key(plan, key_node.value, node)
        self.check_labels()
        return plan

    def check_labels(self) -> None:
        """Labels must be distinct; an extra metric equal to a bound one is simply dropped."""
        ordered = sorted(self.entries, key=lambda e: e[0] != "metrics")  # bound ones first
        first: dict[str, tuple[str, str, dict[str, Any], yaml.Node]] = {}
        for key, label, metric_id, options, node in ordered:
            other = first.get(label)
            if other is None:
                first[label] = (key, metric_id, options, node)
                continue
            same = other[1] == metric_id and other[2] == options
            if key == "extra_metrics" and same:
                continue
            raise self.fail(
                node,
                f"the label {label!r} is already used on line {other[3].start_mark.line + 1}. "
                "Labels must be distinct: give this entry its own `label` (or write "
                f"{metric_id}@LABEL).",
            )

    def read_key(self, plan: _Plan, key: str, node: yaml.Node) -> None:
        import yaml

        if key == "suite":
            plan.suite = self.text(key, node)
        elif key == "data":
            plan.data = self.path_value(key, node)
            plan.data_name = os.fspath(plan.data)
            if not plan.data.is_file():
                raise self.fail(
                    node,
                    f"`data` names {plan.data_name}, which is not a file (paths are relative "
                    "to the configuration file's folder).",
                )
        elif key == "format":
            value = self.text(key, node)
            if value not in FORMATS:
                raise self.fail(
                    node,
                    f"`format` ({value!r}) must be one of {one_of(FORMATS)}."
                    f"{did_you_mean(value, FORMATS)}",
                )
            plan.format = value
        elif key == "columns":
            if not isinstance(node, yaml.MappingNode):
                raise self.fail(
                    node, "`columns` must map roles to column names, e.g. output: response."
                )
            for role_node, column_node in node.value:
                role = self.value(role_node)
                if role not in ROLES:
                    raise self.fail(
                        role_node,
                        f"{role!r} is not a column role; roles are {one_of(ROLES)}."
                        f"{did_you_mean(str(role), ROLES)}",
                    )
                plan.columns[role] = self.text(f"columns.{role}", column_node)
        elif key in ("answer_delimiter", "null_output"):
            setattr(plan, key, self.text(key, node))
        elif key in ("metrics", "extra_metrics"):
            getattr(plan, key).extend(self.metric_list(key, node))
        elif key == "ci_method":
            value = self.text(key, node)
            try:
                check_ci_method(value)
            except ConfigError as exc:
                raise self.fail(node, str(exc)) from None
            plan.ci_method = value
        elif key == "confidence":
            value = self.value(node)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise self.fail(
                    node, f"`confidence` ({value!r}) must be a number in (0, 1), e.g. 0.95."
                )
            plan.confidence = float(value)
        elif key == "seed":
            value = self.value(node)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise self.fail(node, f"`seed` ({value!r}) must be a whole number of 0 or more.")
            plan.seed = value
        elif key == "out":
            plan.out = self.path_value(key, node)
        elif key == "reports":
            plan.reports = self.report_list(node)

    def metric_list(self, key: str, node: yaml.Node) -> list[MetricSpec]:
        import yaml

        entries = node.value if isinstance(node, yaml.SequenceNode) else [node]
        specs = []
        for entry in entries:
            value = self.value(entry)
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
            label, metric_id = self.checked(spec, entry)
            self.entries.append((key, label, metric_id, dict(spec.options), entry))
            specs.append(spec)
        return specs

    def checked(self, spec: MetricSpec, entry: yaml.Node) -> tuple[str, str]:
        """Configure ``spec`` once; return its label and metric id, or fail at its line."""
        import yaml

        from ._runner import plan_metrics

        try:
            planned = plan_metrics([spec])[0]
        except ConfigError as exc:
            node = entry
            if isinstance(entry, yaml.MappingNode):
                message = str(exc)
                for key_node, value_node in entry.value:
                    if f"`{key_node.value}`" in message:
                        node = key_node
                        break
                    if key_node.value == "name" and f"{spec.name!r}" in message:
                        node = value_node
            raise type(exc)(f"{self.at(node)}: {exc}") from exc
        return planned.label, planned.metric_id

    def report_list(self, node: yaml.Node) -> list[str]:
        import yaml

        from ._reports import available_formats

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


def load_config(path: str | os.PathLike[str]) -> _Plan:
    """Read and check a run configuration file (see ``docs/cli.md`` for its keys).

    Raises:
        ConfigError: an unknown key, a value of the wrong type, an unknown metric or option;
            the message names the file, line and column.
        InputError: the file is not UTF-8.
    """
    return _ConfigReader(Path(path)).read()


# -- running -------------------------------------------------------------------------------


@attrs.define
class _View:
    """How to show a run: table, JSON or nothing."""

    by_group: bool = False
    as_json: bool = False
    quiet: bool = False


def _resolve_suite(name: str | None) -> tuple[str, Suite | None]:
    if name is None:
        return "default", None
    from ._exceptions import UnknownSuiteError
    from ._suite import get_suite

    try:
        suite = get_suite(name)
    except UnknownSuiteError:
        return name, None  # any id is fine for measurement keys
    return suite.suite_id, suite


def _progress_enabled(view: _View) -> bool:
    from ._terminal import progress_wanted

    return progress_wanted(quiet=view.quiet, json_output=view.as_json)


def _execute(plan: _Plan, view: _View) -> None:
    from ._reports import check_out_dir, resolve_formats
    from ._runner import plan_metrics, score
    from ._terminal import progress_bar
    from .inputs import read_items

    assert plan.data is not None
    suite_id, suite = _resolve_suite(plan.suite)
    metrics: list[Any] = list(suite.metrics) if suite is not None else []
    extra: list[Any] = [*plan.metrics, *plan.extra_metrics]
    if suite is None:
        metrics, extra = list(plan.metrics), list(plan.extra_metrics)
    if not metrics and not extra:
        raise ConfigError(
            "No metrics to score: name one with -m NAME (or `metrics:` in a configuration "
            "file). `itemscore metrics` lists the installed ones."
        )
    try:
        planned = plan_metrics(metrics, extra)
    except ConfigError as exc:
        raise type(exc)(f"{plan.source}: {exc}") from exc
    if plan.ci_method is not None:
        check_ci_method(plan.ci_method, "--ci")
    reports = None
    if plan.out is not None:
        check_out_dir(plan.out)
        reports = resolve_formats(plan.reports, notice=_notice_for(view))
    items = read_items(
        plan.data,
        format=plan.format,
        columns=plan.columns,
        answer_delimiter=plan.answer_delimiter,
        null_output=plan.null_output,
        name=plan.data_name or os.fspath(plan.data),
    )
    if not any(item.expected is not None for item in items):
        needing = [p.label for p in planned if "expected" in p.metric.required_inputs]
        if needing:
            column = plan.columns.get("expected", "expected")
            raise InputError(
                f"{plan.data_name}: no row has an answer key (column {column!r} is missing or "
                f"empty), but {one_of(needing)} need{'s' if len(needing) == 1 else ''} one. "
                "Map the answers with --map expected=COLUMN, or leave those metrics out."
            )
    with progress_bar(_progress_enabled(view)) as progress:
        result = score(
            items,
            metrics,
            suite_id=suite_id,
            extra_metrics=extra,
            confidence=plan.confidence if plan.confidence is not None else 0.95,
            ci_method=plan.ci_method,
            seed=plan.seed if plan.seed is not None else 0,
            progress=progress,
        )
    written = _write(result, plan.out, [name for name, _, _ in reports] if reports else None)
    _show([result], view, written)


def _notice_for(view: _View) -> Callable[[str], None]:
    """Where notes go: stderr, or nowhere under --quiet."""
    return _ignore if view.quiet else _notice


def _ignore(message: str) -> None:
    pass


def _notice(message: str) -> None:
    click.echo(message, err=True)


def _write(result: RunResult, out: Path | None, formats: list[str] | None) -> list[Path]:
    if out is None:
        return []
    from ._reports import export

    return export(result, out, formats, notice=_notice)


def _show(results: Sequence[RunResult], view: _View, written: Sequence[Path]) -> None:
    if view.as_json:
        from ._serialize import measurement_to_dict

        payload = [
            {
                "suite": result.suite_id,
                "measurements": [
                    measurement_to_dict(m)
                    for measurements in result.by_model.values()
                    for m in measurements.values()
                ],
            }
            for result in results
        ]
        document: Any = payload[0] if len(payload) == 1 else payload
        if isinstance(document, dict):
            document["files"] = [os.fspath(p) for p in written]
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if view.quiet:
        return
    from ._terminal import make_console, result_tables

    console = make_console()
    for result in results:
        for table in result_tables(result, by_group=view.by_group):
            console.print(table)
    if written and not view.as_json:
        folder = written[0].parent
        names = ", ".join(p.name for p in written)
        click.echo(f"Wrote {names} to {folder}", err=True)


# -- the commands --------------------------------------------------------------------------

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _out_options(func: Any) -> Any:
    for option in reversed(
        [
            click.option(
                "--out",
                type=click.Path(file_okay=False, path_type=Path),
                help="Write results.json, items.jsonl, summary.csv, table.tex (and "
                "results.xlsx) into this folder.",
            ),
            click.option(
                "--report",
                "reports",
                multiple=True,
                metavar="FORMAT",
                help="Write only these report formats with --out (repeatable): json, items, "
                "csv, tex, xlsx or a plugin's format. Default: all.",
            ),
            click.option("--by-group", is_flag=True, help="Add one row per group to the tables."),
            click.option(
                "--json",
                "as_json",
                is_flag=True,
                help="Print the measurements as JSON on stdout instead of tables.",
            ),
            click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors."),
        ]
    ):
        func = option(func)
    return func


def _stat_options(func: Any) -> Any:
    for option in reversed(
        [
            click.option(
                "--ci",
                "ci_method",
                metavar="METHOD",
                help="Interval method: wilson, normal, clopper-pearson, jeffreys, agresti-coull "
                "(ratios); normal, t, bootstrap (means).",
            ),
            click.option(
                "--confidence",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                help="Confidence level of the intervals (default 0.95).",
            ),
            click.option(
                "--seed", type=click.IntRange(min=0), help="Seed for bootstrap intervals."
            ),
        ]
    ):
        func = option(func)
    return func


@click.group(cls=_Group, context_settings=_CONTEXT)
@click.version_option(package_name="itemscore", prog_name="itemscore")
@click.option("--debug", is_flag=True, help="Show the traceback of unexpected errors.")
def cli(debug: bool) -> None:
    """Score model outputs with evaluation metrics from installed packages."""
    if debug:
        _state["debug"] = True


@cli.group(cls=_Group, invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.pass_context
def metrics(ctx: click.Context, as_json: bool) -> None:
    """List the installed metrics, and broken plugins with their error.

    `itemscore metrics show NAME` describes one metric and its options.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ._registry import Registry

    infos = Registry().infos()
    broken_plugins = _broken_plugins()
    if as_json:
        click.echo(
            json.dumps([*map(_info_dict, infos), *broken_plugins], indent=2, ensure_ascii=False)
        )
        return
    from rich.table import Table

    from ._terminal import make_console, metrics_tables

    console = make_console()
    tables = metrics_tables(infos)
    if broken_plugins:
        table: Table = tables[-1] if len(tables) == 2 else _empty_broken_table(tables)
        for entry in broken_plugins:
            table.add_row(
                entry["entry_point"], entry["distribution"] or "", entry["target"], entry["error"]
            )
    for table in tables:
        console.print(table)


def _empty_broken_table(tables: list[Any]) -> Any:
    from rich import box
    from rich.table import Table

    broken = Table(title="Broken plugins", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("entry point", "package", "target"):
        broken.add_column(name, no_wrap=True)
    broken.add_column("error", overflow="fold", style="red")
    tables.append(broken)
    return broken


def _info_dict(info: MetricInfo) -> dict[str, Any]:
    cls = info.cls
    return {
        "id": info.id,
        "entry_point": info.entry_point,
        "target": info.target,
        "distribution": info.distribution,
        "version": info.version,
        "source": info.source,
        "description": cls.description if cls is not None else None,
        "reproducibility_class": cls.reproducibility_class if cls is not None else None,
        "higher_is_better": cls.higher_is_better if cls is not None else None,
        "needs_answer_key": ("expected" in cls.required_inputs) if cls is not None else None,
        "aggregation": cls.aggregation if cls is not None else None,
        "status": info.status,
        "error": info.error,
    }


def _broken_plugins() -> list[dict[str, Any]]:
    """Plugins of ``itemscore.plugins`` (hooks, not metrics) that failed to load."""
    from ._plugins import plugin_manager

    return [
        {
            "id": None,
            "entry_point": b.ref.name,
            "target": b.ref.value,
            "distribution": b.ref.distribution,
            "version": b.ref.version,
            "source": "plugin",
            "description": None,
            "reproducibility_class": None,
            "higher_is_better": None,
            "needs_answer_key": None,
            "aggregation": None,
            "status": "broken",
            "error": b.error,
        }
        for b in plugin_manager().broken
    ]


@metrics.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def show(name: str, as_json: bool) -> None:
    """Describe one metric: what it measures, how it aggregates, its options."""
    from ._registry import Registry
    from ._terminal import yaml_text

    info = Registry().find(name)
    assert info.cls is not None
    if as_json:
        data = _info_dict(info)
        data["options"] = [
            {
                "name": option.name,
                "type": option.type_name,
                "required": option.required,
                "default": None if option.required else json_default(option.default),
                "default_text": "required" if option.required else yaml_text(option.default),
                "choices": list(option.choices) if option.choices else None,
                "description": option.description,
            }
            for option in info.cls.options().values()
        ]
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from ._terminal import make_console, metric_detail

    console = make_console()
    for renderable in metric_detail(info):
        console.print(renderable)


def json_default(value: Any) -> Any:
    """An option default in JSON form (tuples as lists, other objects as text)."""
    from ._serialize import json_safe

    return json_safe(value)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--metric",
    "metric_specs",
    multiple=True,
    metavar="SPEC",
    help="A metric, repeatable: NAME[@LABEL][:KEY=VALUE,...], e.g. "
    "-m 'f1:average=weighted,labels=[positive,negative]'.",
)
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A YAML file with metrics and other settings; command-line options win.",
)
@click.option("--extra-metrics", multiple=True, metavar="NAME,...", help="More metrics by name.")
@click.option("--suite", metavar="ID", help="Suite id for measurement keys; an installed "
              "suite of that id adds its bound metrics.")  # fmt: skip
@click.option(
    "--format",
    "input_format",
    type=click.Choice(FORMATS),
    help="The file's format (default: from its extension).",
)
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="ROLE=COLUMN",
    help=f"Read a role from another column (roles: {', '.join(ROLES)}).",
)
@click.option("--answer-delimiter", metavar="TEXT", help="Split `expected` into several answers.")
@click.option(
    "--null-output",
    metavar="TEXT",
    help="An output cell equal to TEXT is a failed request (CSV has no null).",
)
@_stat_options
@_out_options
def score(
    file: Path,
    metric_specs: tuple[str, ...],
    config: Path | None,
    extra_metrics: tuple[str, ...],
    suite: str | None,
    input_format: str | None,
    maps: tuple[str, ...],
    answer_delimiter: str | None,
    null_output: str | None,
    ci_method: str | None,
    confidence: float | None,
    seed: int | None,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Score a file of model outputs with the metrics named by -m.

    FILE is JSON lines, JSON (a list of objects), CSV, TSV or Parquet.
    """
    from .inputs import parse_column_map

    plan = load_config(config) if config is not None else _Plan()
    plan.data, plan.data_name = file, os.fspath(file)
    plan.metrics += _cli_specs(metric_specs)
    plan.extra_metrics += _extra_specs(extra_metrics)
    plan.columns.update(parse_column_map(maps))
    _override(
        plan,
        format=input_format,
        suite=suite,
        answer_delimiter=answer_delimiter,
        null_output=null_output,
        ci_method=ci_method,
        confidence=confidence,
        seed=seed,
        out=out,
        reports=list(reports) or None,
    )
    if config is None or metric_specs:
        plan.source = "the command line" if config is None else f"{config} and the command line"
    _execute(plan, _View(by_group, as_json, quiet))


def _override(plan: _Plan, **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            setattr(plan, key, value)


@cli.command("run")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_out_options
def run_command(
    config: Path,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Score the data named in a YAML configuration file.

    CONFIG holds suite, data, columns, metrics, out... (see docs/cli.md).
    """
    plan = load_config(config)
    if plan.data is None:
        raise ConfigError(
            f"{config}:1:1: the configuration has no `data` key; name the file of outputs, "
            "e.g. `data: outputs.jsonl` (relative to the configuration file)."
        )
    _override(plan, out=out, reports=list(reports) or None)
    _execute(plan, _View(by_group, as_json, quiet))


@cli.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-m",
    "--metric",
    "metric_specs",
    multiple=True,
    metavar="SPEC",
    help="A metric to add or recompute (repeatable); none: recompute every saved metric.",
)
@_stat_options
@_out_options
def rescore(
    results: Path,
    metric_specs: tuple[str, ...],
    ci_method: str | None,
    confidence: float | None,
    seed: int | None,
    out: Path | None,
    reports: tuple[str, ...],
    by_group: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Add or recompute metrics on a saved results.json, without the model."""
    from ._reports import check_out_dir, resolve_formats
    from ._result import RunResult
    from ._runner import rescore as rescore_result
    from ._terminal import progress_bar

    view = _View(by_group, as_json, quiet)
    specs = _cli_specs(metric_specs)
    if ci_method is not None:
        check_ci_method(ci_method, "--ci")
    formats = None
    if out is not None:
        check_out_dir(out)
        planned = resolve_formats(list(reports) or None, notice=_notice_for(view))
        formats = [name for name, _, _ in planned]
    saved = RunResult.load_json(results)
    with progress_bar(_progress_enabled(view)) as progress:
        result = rescore_result(
            saved,
            specs or None,
            confidence=confidence,
            ci_method=ci_method,
            seed=seed,
            progress=progress,
        )
    _show([result], view, _write(result, out, formats))


@cli.command()
@click.option("--by-group", is_flag=True, help="Add one row per group to the tables.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each suite's reports into OUT/<suite id>/.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
def demo(by_group: bool, out: Path | None, as_json: bool) -> None:
    """Score the bundled demo data and print the tables (no arguments needed)."""
    from ._demo import demo_suites
    from ._reports import check_out_dir
    from ._runner import run
    from ._terminal import make_console, progress_bar

    if out is not None:
        check_out_dir(out)
    suites = demo_suites()
    view = _View(by_group, as_json, False)
    console = None if as_json else make_console()
    results = []
    for suite in suites:
        with progress_bar(_progress_enabled(view), suite.suite_id) as progress:
            result = run(suite, progress=progress)
        results.append(result)
        if console is not None:
            console.print(f"[bold]{suite.suite_id}[/bold]: {suite.description}")
            _show([result], view, [])
    written = []
    for suite, result in zip(suites, results):
        if out is not None:
            written += _write(result, out / suite.suite_id, None)
    if as_json:
        _show(results, view, written)
    elif written:
        click.echo(f"Wrote the reports to {out}", err=True)
