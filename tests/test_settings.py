"""``RunSettings``: one shape with its defaults written once, each refusal naming its setting."""

from __future__ import annotations

import inspect
import json
import socket
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ConfigError, RunSettings
from itemscore._run import prepare_settings
from itemscore.cli import cli


def items(n: int = 6) -> list[dict[str, str]]:
    return [{"id": str(i), "output": "a", "expected": "a" if i % 2 else "b"} for i in range(n)]


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("suite_id", ""),
        ("confidence", 1.5),
        ("ci_method", "wilsn"),
        ("seed", "7"),
        ("concurrency", 0),
        ("executor", ""),
        ("workers", 0),
        ("retries", -1),
        ("item_timeout", -3),
        ("deadline", "soon"),
        ("worker_memory", "1K"),
        ("reduce", "pass@x"),
    ],
)
def test_every_refusal_names_its_setting_as_data(setting: str, value: Any) -> None:
    """The error carries the field it is about, so that callers never read it from the text."""
    with pytest.raises(ConfigError) as caught:
        RunSettings(**{setting: value})
    assert caught.value.setting == setting
    assert f"`{setting}` ({value!r})" in str(caught.value)


@pytest.mark.parametrize("entry", [itemscore.score, itemscore.run, itemscore.rescore])
def test_the_entry_points_take_their_defaults_from_run_settings(entry: Any) -> None:
    """score/run/rescore default each setting to RunSettings' own default (rescore: the saved)."""
    defaults = {field.name: field.default for field in attrs.fields(RunSettings)}
    parameters = inspect.signature(entry).parameters
    shared = [name for name in parameters if name in defaults and name != "reduce"]
    assert len(shared) >= 8
    for name in shared:
        given = parameters[name].default
        if entry is itemscore.rescore and given is None:
            continue  # confidence, ci_method and seed: the saved result's
        assert given == defaults[name], name


def test_a_metric_context_defaults_as_the_run_settings() -> None:
    """What a metric is told by default (tests, direct aggregate calls) is what a run uses."""
    defaults = {field.name: field.default for field in attrs.fields(RunSettings)}
    told = {field.name: field.default for field in attrs.fields(itemscore.MetricContext)}
    shared = [name for name in told if name in defaults]
    assert sorted(shared) == ["ci_method", "concurrency", "confidence", "seed", "suite_id"]
    for name in shared:
        assert told[name] == defaults[name], name


def test_one_call_checks_the_settings_and_the_executor_together() -> None:
    """A worker memory limit without workers is refused, naming the setting."""
    settings, spec = prepare_settings(confidence=0.9, executor="process", workers=2)
    assert (settings.confidence, settings.workers, spec.name) == (0.9, 2, "process")
    assert settings.retries == RunSettings().retries
    with pytest.raises(ConfigError, match="serial executor scores in this process") as caught:
        prepare_settings(worker_memory="1G")
    assert caught.value.setting == "worker_memory"
    with pytest.raises(ConfigError) as bad:
        prepare_settings(workers="many", executor="process")
    assert bad.value.setting == "workers"


def test_a_setting_refused_at_run_time_is_reported_at_its_flag_or_key(tmp_path: Path) -> None:
    """--worker-memory without workers: exit 2 at the flag, or at the YAML key's line."""
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in items()), encoding="utf-8")
    runner = CliRunner()
    out = tmp_path / "out"
    flag = runner.invoke(
        cli, ["score", str(data), "-m", "exact_match", "--worker-memory", "1G", "--out", str(out)]
    )
    assert flag.exit_code == 2
    assert flag.stderr.startswith("Error: --worker-memory: `worker_memory` ('1G') limits worker")
    assert not out.exists()
    config = tmp_path / "run.yaml"
    config.write_text("data: d.jsonl\nmetrics: [exact_match]\nworker_memory: 1G\n", "utf-8")
    key = runner.invoke(cli, ["run", str(config)])
    assert key.exit_code == 2
    assert key.stderr.startswith(f"Error: {config}:3:16: `worker_memory` ('1G') limits worker")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_dask_address_nobody_answers_at_is_refused_before_scoring() -> None:
    """``client=`` takes a Dask scheduler's address too; it is tried before anything runs."""
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{closed_port()}"
    with pytest.raises(ConfigError, match="no Dask scheduler answers at") as caught:
        itemscore.score(items(), ["exact_match"], executor="dask", client=address)
    assert caught.value.setting == "client"
    with pytest.raises(ConfigError, match="the port is missing"):
        itemscore.score(items(), ["exact_match"], executor="dask", client="127.0.0.1")
    with pytest.raises(ConfigError, match="applies only to executor='dask'"):
        itemscore.score(items(), ["exact_match"], executor="process", client=address)


@pytest.mark.slow
def test_a_dask_address_scores_on_that_cluster_and_leaves_it_running() -> None:
    """The run connects a client to the scheduler at the address and closes it after."""
    distributed = pytest.importorskip("distributed")
    serial = itemscore.score(items(40), ["exact_match", "token_f1"])
    with distributed.LocalCluster(
        n_workers=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # a free port: the default 8787 may be taken
    ) as cluster:
        result = itemscore.score(
            items(40), ["exact_match", "token_f1"], executor="dask",
            client=cluster.scheduler_address,
        )  # fmt: skip
        assert not cluster.scheduler.clients.keys() - {"fire-and-forget"}  # its client closed
    assert result.settings.executor == "dask"
    for key, measurement in serial.measurements.items():
        assert result.measurements[key].value == measurement.value
