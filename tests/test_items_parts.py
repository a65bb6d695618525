"""``items.parquet`` as a folder of parts, each written by the worker that read it (issue 37.3).

A run over a file with workers and ``--out`` has each worker write the items and scores of the
part it read to a file of its own: ``items.parquet/part-00000.parquet``... in item order, each
named in results.json with its rows and SHA-256. A serial run writes one file. Every reader
(``load_json``, ``rescore``, ``verify``, the viewer, ``pyarrow.parquet.read_table``) takes either
form, and every check of the one file holds for each part.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

import itemscore
from itemscore import ResultsFormatError, RunResult, Status
from itemscore.cli import cli

WORKERS = Path(__file__).parent / "workers"
#: Rows of the data file: several parts of the small part size below.
N_ROWS = 2_400
METRICS = ("exact_match", "token_f1")


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _data(folder: Path) -> Path:
    path = folder / "answers.jsonl"
    rows = [
        {
            "id": f"q{i // 2}",
            "model": f"m{i % 2}",
            "group": f"g{i % 3}",
            "expected": ["yes", "sure"] if i % 5 else "yes",
            "output": ("yes", "no", "the answer is yes", None)[i % 4],
        }
        for i in range(N_ROWS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A serial report set and one scored by two workers, of the same data, in small parts."""
    import itemscore.engine._files as files

    root = tmp_path_factory.mktemp("parts")
    data = _data(root)
    patch = pytest.MonkeyPatch()
    patch.setattr(files, "PART_BYTES", data.stat().st_size // 7 + 1)  # 8 parts, even on one
    try:
        made = {"data": data}
        for name, extra in (("serial", ()), ("pooled", ("--workers", "2"))):
            args = ["score", data, "--out", root / name, "-q", *extra]
            for metric in METRICS:
                args += ["-m", metric]
            run = invoke(*args)
            assert run.exit_code == 0, run.output
            made[name] = root / name
        yield made
    finally:
        patch.undo()


def _reference(results: Path) -> dict[str, Any]:
    return json.loads(results.read_text(encoding="utf-8"))["items"]  # type: ignore[no-any-return]


# -- writing ---------------------------------------------------------------------------------


def test_workers_write_their_parts_in_order_and_results_name_each(sets: dict[str, Path]) -> None:
    """part-00000.parquet... in item order, nothing else; each named with its rows and hash."""
    folder = sets["pooled"] / "items.parquet"
    assert folder.is_dir()
    names = sorted(os.listdir(folder))
    assert len(names) >= 6  # two workers, three parts each at least
    assert names == [f"part-{n:05d}.parquet" for n in range(len(names))]
    ref = _reference(sets["pooled"] / "results.json")
    assert set(ref) == {"file", "count", "parts"}
    assert ref["file"] == "items.parquet"
    assert ref["count"] == N_ROWS
    assert [part["file"] for part in ref["parts"]] == names
    for part in ref["parts"]:
        body = (folder / part["file"]).read_bytes()
        assert part["sha256"] == hashlib.sha256(body).hexdigest()
        assert part["rows"] == pq.ParquetFile(folder / part["file"]).metadata.num_rows > 0
    assert sum(part["rows"] for part in ref["parts"]) == N_ROWS
    # Each part starts where the one before ends: the ids run on across the parts.
    ids = [pq.read_table(folder / name, columns=["id", "model"]) for name in names]
    joined = pa.concat_tables(ids)
    assert joined.column("model").to_pylist() == [f"m{i % 2}" for i in range(N_ROWS)]
    assert joined.column("id").to_pylist() == [f"q{i // 2}" for i in range(N_ROWS)]


def test_a_serial_run_writes_one_file(sets: dict[str, Path]) -> None:
    path = sets["serial"] / "items.parquet"
    assert path.is_file()
    ref = _reference(sets["serial"] / "results.json")
    assert set(ref) == {"file", "count", "sha256"}
    assert ref["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_pyarrow_reads_the_folder_as_the_serial_file(sets: dict[str, Path]) -> None:
    """``pyarrow.parquet.read_table`` of the folder (through the set's link) is the file."""
    serial = pq.read_table(sets["serial"] / "items.parquet")
    assert serial.num_rows == N_ROWS
    assert pq.read_table(sets["pooled"] / "items.parquet").equals(serial)


def test_the_part_files_are_written_like_the_one_file(sets: dict[str, Path]) -> None:
    """Same schema, zstd, row groups of at most 64Ki rows."""
    serial = pq.ParquetFile(sets["serial"] / "items.parquet")
    for part in sorted((sets["pooled"] / "items.parquet").iterdir()):
        meta = pq.ParquetFile(part)
        assert meta.schema_arrow == serial.schema_arrow
        chunks = [
            meta.metadata.row_group(g).column(c)
            for g in range(meta.metadata.num_row_groups)
            for c in range(meta.metadata.num_columns)
        ]
        assert {chunk.compression for chunk in chunks} == {"ZSTD"}


# -- reading ---------------------------------------------------------------------------------


def _same_items(a: RunResult, b: RunResult) -> None:
    assert len(a.items) == len(b.items) == N_ROWS
    for left, right in zip(a.items, b.items):
        assert left == right


def test_load_json_reads_the_folder_as_the_file(sets: dict[str, Path]) -> None:
    pooled = RunResult.load_json(sets["pooled"] / "results.json")
    serial = RunResult.load_json(sets["serial"] / "results.json")
    _same_items(pooled, serial)
    assert pooled.measurements == serial.measurements
    # And equal to the items scored in memory, which no file was involved in.
    direct = itemscore.score(sets["data"], list(METRICS))
    _same_items(pooled, direct)


@pytest.mark.parametrize("name", ["serial", "pooled"])
def test_a_loaded_run_leaves_its_keys_and_scores_in_the_file_until_asked(
    sets: dict[str, Path], name: str
) -> None:
    """Loading reads the footers only; each key or label read later equals the file's column."""
    loaded = RunResult.load_json(sets[name] / "results.json")
    table = loaded.table
    assert table._keys is None
    assert table._memory == {}
    assert table._held is None
    assert (len(table), table.labels) == (N_ROWS, list(METRICS))
    assert [table.has(key) for key in ("model", "group", "cluster")] == [True, True, False]
    saved = pq.read_table(sets[name] / "items.parquet")
    for key in ("id", "model", "group", "cluster", "attempt"):
        assert table.key_column(key).to_pylist() == saved.column(key).to_pylist()
    assert table._keys is None  # one column at a time, never the whole keys
    for label in METRICS:
        scores = saved.column(f"score:{label}").combine_chunks()
        assert table.codes(label).tolist() == scores.field("status").to_pylist()
        values = [float("nan") if v is None else v for v in scores.field("value").to_pylist()]
        assert table.values(label).tolist() == pytest.approx(values, nan_ok=True)
    assert table._held is None  # codes and values read their own field, not the label
    made = itemscore.score(sets["data"], list(METRICS)).table
    assert table.key_column("fingerprint").equals(made.key_column("fingerprint"))


def test_compare_pairs_saved_runs_without_their_ids_as_python_text(
    sets: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ids are joined in Arrow: a Python list of every id is never made."""
    from itemscore.engine._table import RunTable

    pooled = RunResult.load_json(sets["pooled"] / "results.json")
    serial = RunResult.load_json(sets["serial"] / "results.json")
    expected = [c.to_dict() for c in itemscore.compare(serial, pooled)]
    key = RunTable.key

    def no_id_lists(self: RunTable, name: str) -> list[Any]:
        assert name != "id", "every id was made a Python string"
        return key(self, name)

    monkeypatch.setattr(RunTable, "key", no_id_lists)
    again = [RunResult.load_json(sets[n] / "results.json") for n in ("serial", "pooled")]
    assert [c.to_dict() for c in itemscore.compare(*again)] == expected
    assert all(c.n_pairs == N_ROWS // 2 for c in itemscore.compare(*again))


def test_rescore_and_verify_read_the_folder(sets: dict[str, Path], tmp_path: Path) -> None:
    from itemscore import rescore

    pooled = RunResult.load_json(sets["pooled"] / "results.json")
    again = rescore(pooled)
    assert again.measurements == pooled.measurements
    _same_items(again, pooled)
    verified = invoke("verify", sets["pooled"] / "results.json", "--json")
    assert verified.exit_code == 0, verified.output
    assert "SHA-256" not in verified.output  # no "records no SHA-256" complaint
    run = invoke("rescore", sets["pooled"] / "results.json", "--out", tmp_path / "re", "-q")
    assert run.exit_code == 0, run.output
    assert pq.read_table(tmp_path / "re" / "items.parquet").equals(
        pq.read_table(sets["serial"] / "items.parquet")
    )


def test_a_saved_run_is_scored_again_a_batch_of_items_at_a_time(
    sets: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """rescore makes records of a batch of the file's items at a time: the same scores."""
    import itemscore._run as run_module
    from itemscore import rescore
    from itemscore.engine._table import ItemSource

    monkeypatch.setattr(run_module, "RESCORE_BATCH", 700)
    asked: list[int] = []
    item_lists = ItemSource.item_lists

    def counted(self: ItemSource, size: int = 8192) -> Iterator[list[Any]]:
        asked.append(size)
        return item_lists(self, size)

    monkeypatch.setattr(ItemSource, "item_lists", counted)
    pooled = RunResult.load_json(sets["pooled"] / "results.json")
    for executor in ("serial", "process"):
        asked.clear()
        again = rescore(pooled, executor=executor, workers=2 if executor != "serial" else None)
        assert asked == [700]
        assert again.measurements == pooled.measurements
        _same_items(again, pooled)


def test_a_loaded_folder_exports_again_as_one_file(sets: dict[str, Path], tmp_path: Path) -> None:
    """Re-exporting a loaded run: the driver writes its items whole, read part by part."""
    from itemscore.reports import export

    pooled = RunResult.load_json(sets["pooled"] / "results.json")
    export(pooled, tmp_path / "again", ["json", "items"])
    assert (tmp_path / "again" / "items.parquet").is_file()
    assert pq.read_table(tmp_path / "again" / "items.parquet").equals(
        pq.read_table(sets["serial"] / "items.parquet")
    )
    _same_items(RunResult.load_json(tmp_path / "again" / "results.json"), pooled)


def test_the_viewer_reads_the_folder_a_row_group_at_a_time(sets: dict[str, Path]) -> None:
    from itemscore.viewer._runs import Runs

    stores = {}
    for name in ("serial", "pooled"):
        runs = Runs([sets[name]])
        (run,) = runs.runs()
        stores[name] = runs.load(run).store
    pooled, serial = stores["pooled"], stores["serial"]
    assert pooled.n == serial.n == N_ROWS
    assert pooled.groups == len(os.listdir(sets["pooled"] / "items.parquet"))
    assert pooled.fresh()
    assert pooled.first(N_ROWS).equals(serial.first(N_ROWS))
    positions = [N_ROWS - 1, 3, 1500, 700]
    assert pooled.take(positions).equals(serial.take(positions))
    names = ["model", "score:exact_match.status", "score:token_f1.value"]
    assert {k: v.to_pylist() for k, v in pooled.columns(names).items()} == {
        k: v.to_pylist() for k, v in serial.columns(names).items()
    }


# -- what the library's ways in write --------------------------------------------------------


def test_score_opened_into_a_report_set_writes_parts(
    sets: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's way through the library: Export's items path becomes the folder."""
    import itemscore.engine._files as files
    from itemscore._run import score_opened
    from itemscore.inputs import open_source
    from itemscore.reports import Export

    monkeypatch.setattr(files, "PART_BYTES", sets["data"].stat().st_size // 7 + 1)
    out = Export(tmp_path / "set", ["json", "items"])
    with open_source(sets["data"], None) as source:
        result = score_opened(
            source,
            list(METRICS),
            keep=files.Keep("parquet", out.items_path()),
            executor="process",
            workers=2,
        )
    out.finish(result)
    assert len(_reference(tmp_path / "set" / "results.json")["parts"]) >= 6
    _same_items(RunResult.load_json(tmp_path / "set" / "results.json"), result)


def test_scores_written_by_the_workers_stay_in_their_parts(
    sets: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No score or key comes back to the driver: the table reads them from the parts.

    The score tasks return only their files; the measurements made from the parts equal the
    serial run's without reading the ids, and a label (or the keys) read from the table
    equals the column in the parts.
    """
    import itemscore.engine._files as files
    from itemscore._run import score_opened
    from itemscore.inputs import open_source

    returned: list[Any] = []
    done = files._Sink.done

    def watched(self: Any, index: int, result: Any, parts: Any) -> None:
        returned.append(result)  # what a worker's task sent back
        done(self, index, result, parts)

    monkeypatch.setattr(files._Sink, "done", watched)
    monkeypatch.setattr(files, "PART_BYTES", sets["data"].stat().st_size // 7 + 1)
    folder = tmp_path / "items.parquet"
    with open_source(sets["data"], None) as source:
        result = score_opened(
            source, list(METRICS), keep=files.Keep("parquet", folder), executor="process", workers=2
        )
    assert len(returned) >= 6
    assert all(part.scores == {} and part.keys == () and part.files for part in returned)
    table = result.table
    assert table.stored == list(METRICS)
    assert table._keys is None  # the measurements read the models and groups alone
    serial = RunResult.load_json(sets["serial"] / "results.json")
    assert result.measurements == serial.measurements
    assert result.by_model == serial.by_model
    assert table.keys.equals(serial.table.keys)  # read from the parts when asked for
    saved = pq.read_table(folder)
    for label in (*METRICS, METRICS[0]):  # each label read again from the parts when asked
        status = saved.column(f"score:{label}").combine_chunks().field("status")
        assert table.scores[label].combine_chunks().field("status").equals(status)
        assert table.score(label).values == serial.table.score(label).values


def test_items_scored_in_memory_are_exported_as_one_file(
    sets: dict[str, Path], tmp_path: Path
) -> None:
    """score(path, workers=2) keeps its items in this process: export writes them whole."""
    from itemscore.reports import export

    result = itemscore.score(sets["data"], list(METRICS), executor="process", workers=2)
    export(result, tmp_path / "set", ["json", "items"])
    assert (tmp_path / "set" / "items.parquet").is_file()
    assert pq.read_table(tmp_path / "set" / "items.parquet").equals(
        pq.read_table(sets["serial"] / "items.parquet")
    )


# -- tampering: every check of the one file holds for each part ------------------------------


def _copy(results: Path, folder: Path) -> Path:
    """A plain copy of a report set (results.json and the items folder, no links)."""
    folder.mkdir(parents=True)
    (folder / "results.json").write_bytes(results.read_bytes())
    shutil.copytree(results.parent / "items.parquet", folder / "items.parquet")
    return folder / "results.json"


def _rehash(results: Path, part: str) -> None:
    """Record a part's new rows and SHA-256, as someone covering an edit would."""
    document = json.loads(results.read_text(encoding="utf-8"))
    path = results.parent / "items.parquet" / part
    for entry in document["items"]["parts"]:
        if entry["file"] == part:
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    results.write_text(json.dumps(document), encoding="utf-8")


def _changed_byte(folder: Path) -> str:
    path = folder / "part-00001.parquet"
    body = bytearray(path.read_bytes())
    body[len(body) // 2] ^= 0xFF
    path.write_bytes(bytes(body))
    return "items.parquet/part-00001.parquet is not the part this results file was written with"


def _extra_rows(folder: Path) -> str:
    """Part 1 holds a hundred times its rows; its new hash recorded, its rows not."""
    path = folder / "part-00001.parquet"
    table = pq.read_table(path)
    rows = table.num_rows
    pq.write_table(pa.concat_tables([table] * 100), path)
    _rehash(folder.parent / "results.json", "part-00001.parquet")
    return (
        f"items.parquet/part-00001.parquet holds {rows * 100} rows by its Parquet footer, but "
        f"the results declare {rows} items; it was refused before any row was read"
    )


def _symlink(folder: Path) -> str:
    path = folder / "part-00001.parquet"
    shutil.move(path, folder.parent / "elsewhere.parquet")
    path.symlink_to(folder.parent / "elsewhere.parquet")
    return "its items part items.parquet/part-00001.parquet is a symbolic link"


def _missing(folder: Path) -> str:
    (folder / "part-00002.parquet").unlink()
    return "its items part items.parquet/part-00002.parquet cannot be read"


def _extra_part(folder: Path) -> str:
    shutil.copy(folder / "part-00000.parquet", folder / "part-99999.parquet")
    return "holds items.parquet/part-99999.parquet, which the results do not name"


def _folder_link(folder: Path) -> str:
    shutil.move(folder, folder.parent / "real-items")
    folder.symlink_to(folder.parent / "real-items")
    return "its items folder items.parquet is a symbolic link"


TAMPERING: dict[str, Callable[[Path], str]] = {
    "changed byte": _changed_byte,
    "extra rows": _extra_rows,
    "symlink": _symlink,
    "missing part": _missing,
    "extra part": _extra_part,
    "folder link": _folder_link,
}


def _never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the rows fails the test: a refusal must come before it."""
    from itemscore.engine._table import RunTable

    def read(*_: object, **__: object) -> None:
        raise AssertionError("the items' rows were read")

    monkeypatch.setattr(RunTable, "from_parquet", read)


@pytest.mark.parametrize("how", list(TAMPERING))
def test_a_tampered_part_is_refused_naming_it(
    sets: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """load_json, verify and the viewer refuse, naming the part, before any row is read."""
    from itemscore.viewer._runs import Runs

    results = _copy(sets["pooled"] / "results.json", tmp_path / "sets" / "copy")
    said = TAMPERING[how](results.parent / "items.parquet")
    run = invoke("verify", results)
    assert run.exit_code == 2, run.output
    assert said in " ".join(run.output.split()), run.output
    runs = Runs([tmp_path / "sets"])
    (found,) = runs.runs()
    with pytest.raises(ResultsFormatError) as viewed:
        runs.load(found)
    assert said in str(viewed.value)
    _never_read(monkeypatch)
    with pytest.raises(ResultsFormatError) as caught:
        RunResult.load_json(results)
    assert f"{results}: " in str(caught.value)
    assert said in str(caught.value)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda parts: parts.reverse(), "are not named in the order of their items"),
        (lambda parts: parts[0].update(rows=parts[0]["rows"] + 1), "declare 2401 rows"),
        (lambda parts: parts[0].update(file="../results.json"), "must be {"),
        (lambda parts: parts[0].pop("sha256"), "must be {"),
        (lambda parts: parts.clear(), "is not a list of 1 to"),
    ],
)
def test_a_results_file_whose_parts_are_altered_is_refused(
    sets: dict[str, Path], tmp_path: Path, edit: Callable[[list[Any]], Any], said: str
) -> None:
    results = _copy(sets["pooled"] / "results.json", tmp_path / "copy")
    document = json.loads(results.read_text(encoding="utf-8"))
    edit(document["items"]["parts"])
    results.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ResultsFormatError, match=f"^{results}: ") as caught:
        RunResult.load_json(results)
    assert said in str(caught.value)


# -- workers that die, and workers that cannot reach the folder ------------------------------


@pytest.fixture
def worker_metrics(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The module of metrics that worker processes can import."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(WORKERS), *sys.path]))
    monkeypatch.syspath_prepend(str(WORKERS))
    import itemscore_isolation_workers  # type: ignore[import-not-found]

    return itemscore_isolation_workers


def test_a_part_whose_worker_dies_leaves_no_stray_file(tmp_path: Path, worker_metrics: Any) -> None:
    """The worker dies on q190 after writing the part's first batches; the folder is whole.

    The part is tried again, cut in two and so on until q190 is alone: each dead try left a
    partial file, and the lone item's errors are written by the driver.
    """
    from itemscore._run import score_opened
    from itemscore.engine._files import Keep
    from itemscore.inputs import open_source

    path = tmp_path / "d.jsonl"
    rows = [{"id": f"q{i}", "output": "a", "expected": "a"} for i in range(300)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folder = tmp_path / "items.parquet"
    with open_source(path, None, batch_rows=20) as source:  # a file written batch by batch
        result = score_opened(
            source,
            [worker_metrics.KillsOn("q190"), "exact_match"],
            keep=Keep("parquet", folder),
            executor="process",
            workers=2,
        )
    names = sorted(os.listdir(folder))
    assert names == [f"part-{n:05d}.parquet" for n in range(len(names))]
    parts = result.table.items.parts  # type: ignore[union-attr]
    assert [part.file for part in parts] == names
    for part in parts:
        assert part.sha256 == hashlib.sha256((folder / part.file).read_bytes()).hexdigest()
    table = pq.read_table(folder)
    assert table.column("id").to_pylist() == [f"q{i}" for i in range(300)]
    states = table.column("score:kills_on_test").combine_chunks().field("status").to_pylist()
    assert [i for i, state in enumerate(states) if state != 0] == [190]
    assert result.measurements["default.kills_on_test"].counts[Status.ERROR] == 1
    assert result.measurements["default.exact_match"].n == 299


def test_a_failed_run_leaves_no_folder(
    sets: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that fails while the workers write gives its folder up whole.

    One part's worker cannot reach the folder; the others write theirs.
    """
    import itemscore.engine._files as files
    from itemscore._run import score_opened
    from itemscore.inputs import open_source

    real = files._Sink.out
    written: list[str] = []

    def out(self: Any, index: int, rows: tuple[int, int]) -> Any:
        found = real(self, index, rows)
        written.append(str(self.folder))
        if found is not None and index == 3:
            return files.attrs.evolve(found, folder=str(tmp_path / "unreachable"))
        return found

    monkeypatch.setattr(files._Sink, "out", out)
    monkeypatch.setattr(files, "PART_BYTES", sets["data"].stat().st_size // 7 + 1)
    folder = tmp_path / "items.parquet"
    with open_source(sets["data"], None) as source, pytest.raises(itemscore.ConfigError):
        score_opened(
            source,
            ["exact_match"],
            keep=files.Keep("parquet", folder),
            executor="process",
            workers=2,
        )
    assert written[0] == str(folder)  # the folder was made and written into
    assert not folder.exists()


def test_a_worker_that_cannot_reach_the_folder_stops_the_run_saying_why(
    tmp_path: Path,
) -> None:
    """A worker on another machine sees no such folder: the run stops, naming --out."""
    from itemscore import ConfigError
    from itemscore.engine._part_tasks import PartOut, score_part_task

    out = PartOut(str(tmp_path / "elsewhere" / "items.parquet"), ".part-00000-0-1.tmp", ())
    with pytest.raises(ConfigError) as caught:
        score_part_task(None, None, None, None, out=out)  # type: ignore[arg-type]
    message = str(caught.value)
    assert str(tmp_path / "elsewhere" / "items.parquet") in message
    assert "--out must name a folder on a file system that every worker" in message


def test_a_run_whose_workers_cannot_reach_the_folder_fails_clearly(
    sets: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that see another file system: exit 2 naming the folder, and no report set."""
    import itemscore.engine._files as files

    real = files._Sink.out
    elsewhere = tmp_path / "on-another-machine" / "items.parquet"

    def out(self: Any, index: int, rows: tuple[int, int]) -> Any:
        found = real(self, index, rows)
        return None if found is None else files.attrs.evolve(found, folder=str(elsewhere))

    monkeypatch.setattr(files._Sink, "out", out)
    run = invoke("score", sets["data"], "-m", "exact_match", "--workers", "2", "--out",
                 tmp_path / "run", "-q")  # fmt: skip
    assert run.exit_code == 2, run.output
    said = " ".join(run.output.split())
    assert str(elsewhere) in said
    assert "--out must name a folder on a file system that every worker" in said
    assert not (tmp_path / "run" / "results.json").exists()
    assert not (tmp_path / "run" / "items.parquet").exists()
