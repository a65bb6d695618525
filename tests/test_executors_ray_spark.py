"""Executors ``ray`` and ``spark``: the serial run's results to the bit; options; failures.

Ray and Spark run locally, each started once for the module (the caller's cluster and
session); the command-line tests start their own in a fresh process and shut them down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import itemscore
from itemscore import ConfigError, Status

ray = pytest.importorskip("ray")
pyspark_sql = pytest.importorskip("pyspark.sql")

pytestmark = [
    pytest.mark.slow,
    # Ray Data leaves the log file of a dataset whose task failed open, to be collected later.
    pytest.mark.filterwarnings("ignore:unclosed file .*ray-data:ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    # Ray's DataContext warns of its own deprecated settings when a test makes a dataset.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context"),
]

WORKERS = Path(__file__).parent / "workers"
SCRIPT = Path(sys.executable).parent / "itemscore"
METRICS = [
    "exact_match",
    "token_f1",
    {"name": "accuracy", "labels": ["yes", "no"]},
    {"name": "f1", "labels": ["yes", "no"], "average": "macro"},
]
#: The parts of results.json that must not depend on who scored (settings name the executor).
SAME = ("measurements", "by_model", "items")


def _rows() -> list[dict[str, Any]]:
    """Two models, groups, clusters, three attempts, failed requests, missing answer keys."""
    rows = []
    for i in range(600):
        question = i // 6
        rows.append(
            {
                "id": f"q{question}",
                "model": f"m{i % 2}",
                "attempt": (i // 2) % 3 + 1,
                "output": None if i % 19 == 4 else ("yes", "no", "yes please")[i % 3],
                "expected": None if i % 29 == 5 else ("yes", "no")[question % 2],
                "group": f"g{question % 4}",
                "cluster": f"c{question // 5}",
            }
        )
    return rows


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "outputs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    return path


def document(result: itemscore.RunResult) -> dict[str, str]:
    """Every value of results.json that a run's executor must not change, as exact text."""
    saved = result.to_dict()
    return {key: json.dumps(saved[key], sort_keys=True) for key in SAME}


@pytest.fixture(scope="module")
def serial(data: Path) -> dict[str, str]:
    return document(itemscore.score(data, METRICS, seed=5, reduce=["mean", "pass@2"]))


@pytest.fixture(scope="module")
def workers_path() -> Iterator[None]:
    """The test metrics importable by the engines' workers (started after this)."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(WORKERS), *sys.path])
    sys.path.insert(0, str(WORKERS))
    yield
    sys.path.remove(str(WORKERS))
    if before is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = before


@pytest.fixture(scope="module")
def ray_cluster(workers_path: None) -> Iterator[None]:
    """A local Ray this process is connected to: the caller's cluster."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def spark(workers_path: None) -> Iterator[Any]:
    """A local SparkSession of 2 cores: the caller's session."""
    before = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    if before is None:
        os.environ.pop("PYSPARK_PYTHON", None)
    else:
        os.environ["PYSPARK_PYTHON"] = before


# -- the serial run's results, to the bit -----------------------------------------------------


@pytest.mark.usefixtures("ray_cluster")
def test_ray_gives_the_serial_results_to_the_bit(data: Path, serial: dict[str, str]) -> None:
    """A file read in parts by Ray Data's workers, and items sent from here: serial's values."""
    result = itemscore.score(data, METRICS, seed=5, reduce=["mean", "pass@2"], executor="ray")
    assert document(result) == serial
    # The caller's cluster has the workers it has: none are asked for, none recorded (as Dask).
    assert (result.settings.executor, result.settings.workers) == ("ray", None)
    items = itemscore.score(
        _rows(), METRICS, seed=5, reduce=["mean", "pass@2"], executor="ray"
    )  # in memory
    assert document(items) == serial
    assert ray.is_initialized()  # the caller's connection is left open


def test_spark_gives_the_serial_results_and_leaves_the_session_running(
    data: Path, serial: dict[str, str], spark: Any
) -> None:
    """mapInArrow on the caller's session: serial's values; the session is not stopped."""
    kwargs: dict[str, Any] = {"seed": 5, "reduce": ["mean", "pass@2"], "executor": "spark"}
    result = itemscore.score(data, METRICS, session=spark, **kwargs)
    assert document(result) == serial
    assert (result.settings.executor, result.settings.workers) == ("spark", None)
    assert document(itemscore.score(_rows(), METRICS, session=spark, **kwargs)) == serial
    active = itemscore.score(data, METRICS, **kwargs)  # no session given: the active one
    assert document(active) == serial
    assert spark.range(3).count() == 3  # still running


# -- a Ray Dataset or a Spark DataFrame handed in: written by the engine, read by the workers --


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder where a run stages a dataset's parts: checked empty after each run."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return folder


def _staged_left(folder: Path) -> list[str]:
    return [entry.name for entry in folder.iterdir() if entry.name.startswith("itemscore-data-")]


@pytest.mark.usefixtures("ray_cluster")
def test_a_ray_dataset_gives_the_serial_results_to_the_bit(
    serial: dict[str, str], private_tmp: Path
) -> None:
    """Blocks written as Parquet parts by Ray, in order, read by the run's workers."""
    dataset = ray.data.from_items(_rows(), override_num_blocks=4)
    for executor in ("ray", "serial", "process"):
        result = itemscore.score(
            dataset, METRICS, seed=5, reduce=["mean", "pass@2"], executor=executor
        )
        assert document(result) == serial, executor
        assert result.provenance["data"]["path"] == "Ray Dataset"
        assert result.provenance["data"]["rows"] == len(_rows())
    assert _staged_left(private_tmp) == []


def test_a_spark_dataframe_gives_the_serial_results_to_the_bit(
    serial: dict[str, str], spark: Any, private_tmp: Path
) -> None:
    """Partitions written as Parquet parts by Spark, in order; the session left running."""
    schema = (
        "id string, model string, attempt long, output string, expected string, "
        "`group` string, cluster string"
    )
    frame = spark.createDataFrame(_rows(), schema=schema).coalesce(3)
    result = itemscore.score(
        frame, METRICS, seed=5, reduce=["mean", "pass@2"], executor="spark", session=spark
    )
    assert document(result) == serial
    assert result.provenance["data"]["path"] == "Spark DataFrame"
    assert _staged_left(private_tmp) == []
    assert spark.range(3).count() == 3


@pytest.mark.usefixtures("ray_cluster")
def test_a_bad_row_of_a_dataset_is_named_by_its_part_and_row(private_tmp: Path) -> None:
    """The staged files' paths are the run's business: a message names the dataset's parts."""
    rows = [{"id": f"q{i}", "output": "yes", "expected": "yes"} for i in range(90)]
    rows[70]["id"] = "q3"
    with pytest.raises(itemscore.InputError) as caught:
        itemscore.score(ray.data.from_items(rows, override_num_blocks=3), ["exact_match"])
    assert str(caught.value).startswith("Ray Dataset part 3: row 11: the id 'q3' appears twice")
    assert "first at row 4 of Ray Dataset part 1" in str(caught.value)
    assert "itemscore-data-" not in str(caught.value)
    empty = ray.data.from_items(rows).limit(0)
    with pytest.raises(itemscore.InputError, match="The Ray Dataset holds no rows to score"):
        itemscore.score(empty, ["exact_match"])
    with pytest.raises(ConfigError, match=r"`format` .* applies to files; a Ray Dataset"):
        itemscore.score(ray.data.from_items(rows), ["exact_match"], format="parquet")
    assert _staged_left(private_tmp) == []


def test_a_dataframe_of_a_cluster_is_refused_with_the_way_out(private_tmp: Path) -> None:
    """A cluster's workers cannot write into this machine's folders: refused before writing."""
    from itemscore.inputs._datasets import staged

    # What a DataFrame of a standalone cluster answers; it has no writer: nothing is written.
    frame = SimpleNamespace(sparkSession=SimpleNamespace(sparkContext=SimpleNamespace(
        master="spark://head:7077"
    )))  # fmt: skip
    with pytest.raises(ConfigError) as caught, staged(frame, "spark"):
        pass
    assert "the cluster spark://head:7077" in str(caught.value)
    assert "df.write.parquet(URL)" in str(caught.value)
    assert _staged_left(private_tmp) == []


# -- the command line: local engines started and stopped by the run ---------------------------


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ITEMSCORE_", "RAY_"))}
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True, text=True, env=environ, timeout=180, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("engine", ["ray", "spark"])
def test_the_command_line_scores_on_a_local_engine(engine: str, data: Path, tmp_path: Path) -> None:
    """``--executor ray|spark --workers 2``: a local engine for the run, serial's values."""
    args: list[str | Path] = [
        "score",
        data,
        "-m",
        "exact_match",
        "-m",
        "token_f1",
        "--reduce",
        "mean,pass@2",
    ]
    serial_out, engine_out = tmp_path / "serial", tmp_path / engine
    done = [
        _cli(*args, *more, "--seed", "5", "-q", "--out", out)
        for out, more in ((serial_out, []), (engine_out, ["--executor", engine, "--workers", "2"]))
    ]
    assert [d.returncode for d in done] == [0, 0], done[1].stderr
    saved = [json.loads((out / "results.json").read_text()) for out in (serial_out, engine_out)]
    for key in ("measurements", "by_model"):
        assert saved[0][key] == saved[1][key]
    assert (saved[1]["settings"]["executor"], saved[1]["settings"]["workers"]) == (engine, 2)
    assert "Traceback" not in done[1].stderr
    # A quiet run says nothing of the engine's own: no log level, no pandas version warning.
    assert "Setting default log level" not in done[1].stderr
    assert "Warning" not in done[1].stderr


# -- failures -------------------------------------------------------------------------------


def test_an_item_that_raises_is_an_error_item_on_both(ray_cluster: None, spark: Any) -> None:
    """A metric raising on one item: that item is ``error``, every other scored."""
    from itemscore_engine_workers import RaisesOn  # type: ignore[import-not-found]

    items = [{"id": f"i{i}", "output": "x", "expected": "x"} for i in range(40)]
    for options in ({"executor": "ray"}, {"executor": "spark", "session": spark}):
        result = itemscore.score(items, [RaisesOn("i7"), "exact_match"], **options)
        errors = result.measurements["default.raises_on_test"].counts
        assert (errors[Status.ERROR], errors[Status.OK]) == (1, 39)
        failed = result.items[7].scores["raises_on_test"]
        assert failed.status is Status.ERROR
        assert "cannot score i7" in (failed.reason or "")
        assert result.measurements["default.exact_match"].counts[Status.OK] == 40


def test_an_item_that_kills_its_worker_costs_only_itself(ray_cluster: None, spark: Any) -> None:
    """A Python worker that exits on one item: the run cuts its shard until it is alone."""
    from itemscore_isolation_workers import KillsOn  # type: ignore[import-not-found]

    items = [{"id": f"i{i}", "output": "x", "expected": "x"} for i in range(24)]
    for options in ({"executor": "ray"}, {"executor": "spark", "session": spark}):
        result = itemscore.score(items, [KillsOn("i5"), "exact_match"], retries=0, **options)
        counts = result.measurements["default.kills_on_test"].counts
        assert (counts[Status.ERROR], counts[Status.OK]) == (1, 23), options["executor"]
        lost = result.items[5].scores["kills_on_test"]
        assert (lost.reason or "").startswith("worker lost: "), lost.reason
    assert spark.range(2).count() == 2  # the session survives its workers' deaths


# -- options that do not apply ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"executor": "process", "address": "auto"}, "`address` applies only to executor='ray'"),
        ({"executor": "ray", "session": object()}, "`session` applies only to executor='spark'"),
        ({"executor": "dask", "address": "auto"}, "pass executor='ray'"),
        ({"executor": "spark", "session": "local[2]"}, "must be a pyspark.sql.SparkSession"),
        ({"executor": "ray", "address": ""}, "must name a Ray cluster as ray.init takes it"),
        ({"executor": "ray", "worker_memory": "2G"}, "does not apply to executor='ray'"),
        ({"executor": "spark", "worker_memory": "2G"}, "`spark.executor.pyspark.memory`"),
    ],
    ids=[
        "address-process",
        "session-ray",
        "address-dask",
        "session-not-one",
        "address-empty",
        "memory-ray",
        "memory-spark",
    ],
)
def test_options_that_do_not_apply_are_config_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        itemscore.score([{"id": "a", "output": "x"}], ["answered_rate"], **kwargs)


def test_workers_do_not_apply_to_a_given_cluster_or_session(
    ray_cluster: None, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster has the workers it has: ``workers`` with one is an error naming the fix."""
    items = [{"id": "a", "output": "x"}]
    with pytest.raises(ConfigError, match="connected to a Ray cluster already"):
        itemscore.score(items, ["answered_rate"], executor="ray", workers=2)
    with pytest.raises(ConfigError, match=r"Leave `address` out, or call ray\.shutdown"):
        itemscore.score(items, ["answered_rate"], executor="ray", address="auto")
    with pytest.raises(ConfigError, match="leave `session` out to make a local one"):
        itemscore.score(items, ["answered_rate"], executor="spark", session=spark, workers=2)
    with pytest.raises(ConfigError, match=r"stop that session \(session.stop\(\)\)"):
        itemscore.score(items, ["answered_rate"], executor="spark", workers=2)
    from itemscore.executors.ray import check_options as check_ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    with pytest.raises(ConfigError, match="RAY_ADDRESS is 'ray://head:10001'"):
        check_ray(2, None)
    check_ray(None, None)  # the cluster RAY_ADDRESS names, with the CPUs it has
    monkeypatch.setenv("RAY_ADDRESS", "local")
    check_ray(2, None)  # Ray's name for a local Ray: started, of that many CPUs


@pytest.mark.parametrize(
    ("executor", "module", "extra"), [("ray", "ray", "ray"), ("spark", "pyspark", "spark")]
)
def test_a_missing_engine_names_the_extra(
    executor: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the engine's package: a ConfigError with the command that installs it."""
    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=f"executor='{executor}' needs") as info:
        itemscore.score([{"id": "a", "output": "x"}], ["answered_rate"], executor=executor)
    assert "pip install" in str(info.value)
    from itemscore._extras import install_hint

    assert install_hint(extra=extra) in str(info.value)
    assert "ray[data]" in install_hint(extra="ray")
