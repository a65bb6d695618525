"""Reports written as a run goes: items.jsonl chunk by chunk, the same bytes as after the run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import itemscore
from itemscore import ItemResult, Metric
from itemscore._packed import PackedItems
from itemscore._runner import _score
from itemscore.cli import cli
from itemscore.reports import Export, export


def make_items(n: int = 500) -> list[ItemResult]:
    return [
        ItemResult(
            id=f"q{i}",
            output=None if i % 13 == 0 else f"Answer {i % 7}",
            expected=None if i % 11 == 0 else (f"answer {i % 5}", "x"),
            group=f"g{i % 3}",
            metadata={"i": i},
        )
        for i in range(n)
    ]


METRICS = ["exact_match", "token_f1", "answered_rate"]
FORMATS = ["json", "items", "csv"]


def data_file(folder: Path) -> Path:
    """The items of :func:`make_items` as a JSON lines file (id and output)."""
    data = folder / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"id": i.id, "output": i.output}) + "\n" for i in make_items()),
        encoding="utf-8",
    )
    return data


def invoke(*args: str | Path) -> int:
    return CliRunner().invoke(cli, [str(a) for a in args]).exit_code


def without_provenance(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    document.pop("provenance")
    return document


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("itemscore._runner.STREAM_CHUNK", 64)


def streamed_run(out: Path, items: Sequence[ItemResult], metrics: list[Any]) -> list[Path]:
    writer = Export(out, FORMATS)
    packed = PackedItems(items[at : at + 50] for at in range(0, len(items), 50))
    result = _score(packed, metrics, on_chunk=writer.add_chunk)
    return writer.finish(result)


def test_streamed_items_jsonl_equals_the_one_written_after(
    tmp_path: Path, small_chunks: None
) -> None:
    paths = streamed_run(tmp_path / "streamed", make_items(), METRICS)
    after = export(itemscore.score(make_items(), METRICS), tmp_path / "after", FORMATS)
    assert [p.name for p in paths] == [p.name for p in after]
    streamed, written = tmp_path / "streamed", tmp_path / "after"
    assert (streamed / "items.jsonl").read_bytes() == (written / "items.jsonl").read_bytes()
    assert without_provenance(streamed / "results.json") == without_provenance(
        written / "results.json"
    )
    loaded = itemscore.RunResult.load_json(streamed / "results.json")
    assert list(loaded.items) == list(itemscore.score(make_items(), METRICS).items)


def test_chunks_of_another_run_are_not_kept(tmp_path: Path) -> None:
    """finish() checks the count: a result that is not the streamed run gets its own file."""
    writer = Export(tmp_path, FORMATS)
    other = itemscore.score(make_items(10), METRICS)
    result = _score(make_items(), METRICS, on_chunk=writer.add_chunk)
    del result
    writer.finish(other)
    lines = (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10


def test_discard_leaves_the_previous_set(tmp_path: Path, small_chunks: None) -> None:
    streamed_run(tmp_path, make_items(100), METRICS)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    writer = Export(tmp_path, FORMATS)
    _score(PackedItems([make_items(300)]), METRICS, on_chunk=writer.add_chunk)
    writer.discard()
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before
    assert [p.name for p in (tmp_path / ".itemscore").iterdir() if p.name.startswith("set-")] == [
        (tmp_path / ".itemscore" / "current").resolve().name
    ]


def test_discard_before_anything_leaves_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"
    writer = Export(out, FORMATS)
    writer.add_chunk(make_items(3), {})
    writer.discard()
    assert not (tmp_path / "new").exists()


class Boom(Metric):
    """Stops the run from outside any item: the whole run fails."""

    metric_id = "stream_boom_test"
    required_inputs = ()

    def score_item(self, item: ItemResult, ctx: itemscore.MetricContext) -> Any:
        if item.id == "q300":
            raise KeyboardInterrupt
        return self.ok()


def test_an_interrupted_command_leaves_the_old_set(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = data_file(tmp_path)
    out = tmp_path / "out"
    assert invoke("score", data, "-m", "answered_rate", "--out", out) == 0
    before = (out / "items.jsonl").read_bytes()
    monkeypatch.setattr(
        "itemscore.cli._pipeline.plan_entries",
        lambda *a, **k: itemscore.plan(["answered_rate", Boom()]),
    )
    assert invoke("score", data, "-m", "answered_rate", "--out", out) != 0
    assert (out / "items.jsonl").read_bytes() == before
    sets = [p for p in (out / ".itemscore").iterdir() if p.name.startswith("set-")]
    assert len(sets) == 1


class CorpusShare(Metric):
    """A corpus metric: its scores are known only at the end, so items.jsonl waits."""

    metric_id = "stream_corpus_share_test"

    def compute(self, predictions: Any, references: Any) -> itemscore.MetricResult:
        rows = [None if out is None else 1.0 for out in predictions]
        return self.result(1.0, per_row=rows)


def test_a_run_with_a_corpus_metric_writes_items_after(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = data_file(tmp_path)
    monkeypatch.setattr(
        "itemscore.cli._pipeline.plan_entries",
        lambda *a, **k: itemscore.plan(["answered_rate", CorpusShare()]),
    )
    out = tmp_path / "out"
    assert invoke("score", data, "-m", "answered_rate", "--out", out) == 0
    first = json.loads((out / "items.jsonl").read_text(encoding="utf-8").splitlines()[1])
    assert list(first["scores"]) == ["answered_rate", "stream_corpus_share_test"]
    assert first["scores"]["stream_corpus_share_test"]["value"] == 1.0


# -- items.jsonl written by a process of its own ---------------------------------------------


def test_a_background_writer_writes_the_same_bytes(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("itemscore.reports._items_stream.BACKGROUND_FROM", 1)
    items = make_items()
    packed = PackedItems(items[at : at + 64] for at in range(0, len(items), 64))
    writer = Export(tmp_path / "bg", FORMATS, source=packed)
    result = _score(packed, METRICS, on_chunk=writer.add_chunk)
    assert type(writer._items).__name__ == "BackgroundItems"
    writer.finish(result)
    export(itemscore.score(items, METRICS), tmp_path / "after", FORMATS)
    written = (tmp_path / "bg" / "items.jsonl").read_bytes()
    assert written == (tmp_path / "after" / "items.jsonl").read_bytes()


def test_a_background_writer_takes_chunks_that_are_not_whole_blocks(tmp_path: Path) -> None:
    from itemscore.reports._items_stream import BackgroundItems

    items = make_items(90)
    packed = PackedItems([items[:40], items[40:]])
    result = itemscore.score(items, ["answered_rate"])
    column = result.items._columns["answered_rate"]  # type: ignore[attr-defined]
    stream = BackgroundItems(tmp_path / "items.jsonl", packed)
    stream.write(items[:30], {"answered_rate": column.take(range(30))})  # text, sent as such
    stream.write(items[30:40], {"answered_rate": column.take(range(30, 40))})
    stream.write(items[40:], {"answered_rate": column.take(range(40, 90))})  # one whole block
    stream.close()
    export(result, tmp_path / "after", ["items"])
    assert (tmp_path / "items.jsonl").read_bytes() == (
        tmp_path / "after" / "items.jsonl"
    ).read_bytes()


def test_a_failing_background_writer_is_an_error_naming_why(tmp_path: Path) -> None:
    from itemscore.reports._items_stream import BackgroundItems

    items = make_items(20)
    result = itemscore.score(items, ["answered_rate"])
    stream = BackgroundItems(tmp_path, PackedItems([items]))  # a folder: cannot be opened
    column = result.items._columns["answered_rate"]  # type: ignore[attr-defined]

    def write_then_close() -> None:
        for _ in range(50):  # the error surfaces at a later write, or at close
            stream.write(items, {"answered_rate": column})
        stream.close()

    with pytest.raises(itemscore.ItemscoreError, match=r"Writing items.jsonl failed: .*Directory"):
        write_then_close()


def test_a_killed_background_writer_is_an_error(tmp_path: Path) -> None:
    from itemscore.reports._items_stream import BackgroundItems

    items = make_items(20)
    result = itemscore.score(items, ["answered_rate"])
    stream = BackgroundItems(tmp_path / "items.jsonl", PackedItems([items]))
    stream._process.kill()
    stream._process.wait()
    column = result.items._columns["answered_rate"]  # type: ignore[attr-defined]
    with pytest.raises(itemscore.ItemscoreError, match=r"its process ended with status -9"):
        stream.write(items, {"answered_rate": column})
