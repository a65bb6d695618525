"""Saved results are trusted only as far as they are checked: gate, compare, verify, reading.

Every fixture is a real report set (``itemscore score ... --out DIR``) on small data, then
edited the way a hand or a broken copy would: another metric under one label, a per-item
score no metric gives, a number of results.json changed, an items file that holds far more
rows than the results declare.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from itemscore import MetricMismatchError, ResultsFormatError, RunResult, compare
from itemscore._gate import gate
from itemscore.cli import cli

#: Items of one model: half answered exactly, half with the answer inside a sentence, so
#: that ``exact_match`` and ``includes`` disagree on every second item.
N_ITEMS = 200


def _data(folder: Path) -> Path:
    path = folder / "answers.jsonl"
    rows = [
        {"id": f"q{i}", "model": "m", "expected": "yes",
         "output": "yes" if i % 2 == 0 else "the answer is yes"}
        for i in range(N_ITEMS)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``scored(name, *specs)``: the results.json of a report set scored with ``-m`` specs."""
    root = tmp_path_factory.mktemp("trust")
    data = _data(root)
    made: dict[tuple[str, ...], Path] = {}

    def make(name: str, *specs: str) -> Path:
        key = (name, *specs)
        if key not in made:
            args: list[str | Path] = ["score", data, "--out", root / name, "-q"]
            for spec in specs:
                args += ["-m", spec]
            run = invoke(*args)
            assert run.exit_code == 0, run.output
            made[key] = root / name / "results.json"
        return made[key]

    return make


def _copy(results: Path, folder: Path) -> Path:
    """A copy of the report set of ``results`` (results.json and items.parquet) in ``folder``."""
    folder.mkdir(parents=True)
    for name in ("results.json", "items.parquet"):
        (folder / name).write_bytes((results.parent / name).read_bytes())
    return folder / "results.json"


def _rehash(results: Path) -> None:
    """Record the items file's new SHA-256, as someone covering an edit would."""
    document = json.loads(results.read_text(encoding="utf-8"))
    items = results.parent / document["items"]["file"]
    document["items"]["sha256"] = hashlib.sha256(items.read_bytes()).hexdigest()
    results.write_text(json.dumps(document), encoding="utf-8")


def _set_ok_values(results: Path, label: str, value: float) -> str:
    """Give every ok score of ``label`` the value ``value``; the first such item's id."""
    path = results.parent / "items.parquet"
    table = pq.read_table(path)
    column = table.column(f"score:{label}").combine_chunks()
    states = column.field("status").to_pylist()
    values = [value if s == 0 else v for s, v in zip(states, column.field("value").to_pylist())]
    edited = pa.StructArray.from_arrays(
        [column.field("status"), pa.array(values, pa.float64()), column.field("reason"),
         column.field("extra")],
        fields=list(column.type),
    )  # fmt: skip
    index = table.schema.get_field_index(f"score:{label}")
    pq.write_table(table.set_column(index, f"score:{label}", edited), path)
    _rehash(results)
    return str(table.column("id")[states.index(0)].as_py())


# -- 3. one label, two metrics ---------------------------------------------------------------


def test_gate_refuses_a_label_that_names_another_metric(scored: Callable[..., Path]) -> None:
    """exact_match against includes@exact_match: exit 2 naming both metrics, no verdict."""
    base = scored("em", "exact_match")
    other = scored("inc", "includes@exact_match")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05")
    assert run.exit_code == 2, run.output
    assert f"'exact_match' is metric 'exact_match' in {base} but 'includes' in {other}" in (
        run.output
    )
    assert "not worse" not in run.output


def test_gate_refuses_a_label_with_other_options(scored: Callable[..., Path]) -> None:
    """Same metric, another option value: exit 2 naming the option and both values."""
    base = scored("em", "exact_match")
    other = scored("em-cased", "exact_match:ignore_case=false")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05")
    assert run.exit_code == 2, run.output
    assert f"`ignore_case` is True in {base} and False in {other}" in run.output


def test_options_written_out_at_their_defaults_are_the_same_metric(
    scored: Callable[..., Path],
) -> None:
    """``exact_match`` and ``exact_match:ignore_case=true`` pair: the gate gives a verdict."""
    base = scored("em", "exact_match")
    other = scored("em-default", "exact_match:ignore_case=true")
    run = invoke("gate", base, other, "--metric", "exact_match", "--margin", "0.05", "--json")
    assert run.exit_code in (0, 3), run.output
    assert json.loads(run.output)["gain"] == 0.0


def test_compare_refuses_a_label_that_names_another_metric(scored: Callable[..., Path]) -> None:
    """compare: exit 2 on the command line; MetricMismatchError (a ValueError) in Python."""
    base = scored("em", "exact_match")
    other = scored("inc", "includes@exact_match")
    run = invoke("compare", base, other)
    assert run.exit_code == 2, run.output
    assert "'includes'" in run.output
    with pytest.raises(MetricMismatchError) as caught:
        compare(RunResult.load_json(base), RunResult.load_json(other))
    assert isinstance(caught.value, ValueError)
    assert caught.value.label == "exact_match"
    assert (caught.value.baseline or {}).get("name") == "exact_match"
    assert (caught.value.candidate or {}).get("name") == "includes"
    with pytest.raises(MetricMismatchError):
        gate(RunResult.load_json(base), RunResult.load_json(other), metric="exact_match",
             margin=0.05)  # fmt: skip


def test_compare_pairs_the_labels_that_agree(scored: Callable[..., Path]) -> None:
    """Naming only the labels whose metrics agree compares them; the others are refused."""
    base = scored("em2", "exact_match", "answered_rate")
    other = scored("inc2", "includes@exact_match", "answered_rate")
    assert invoke("compare", base, other).exit_code == 2
    run = invoke("compare", base, other, "-m", "answered_rate", "--json")
    assert run.exit_code == 0, run.output
    assert [c["metric"] for c in json.loads(run.output)] == ["answered_rate"]


# -- 4. per-item scores no metric gives ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [(5.0, "5.0, outside [0, 1]"), (float("inf"), "inf; a scored value must be a finite"),
     (float("nan"), "NaN (or none); a scored value must be a finite"),
     (-0.5, "-0.5, outside [0, 1]")],
    ids=["five", "inf", "nan", "negative"],
)  # fmt: skip
def test_gate_refuses_a_score_the_metric_cannot_give(
    scored: Callable[..., Path], tmp_path: Path, value: float, shown: str
) -> None:
    """An edited items.parquet (its hash updated too): exit 2 naming file, item and value."""
    base = scored("em", "exact_match")
    candidate = _copy(base, tmp_path / "edited")
    first = _set_ok_values(candidate, "exact_match", value)
    run = invoke("gate", base, candidate, "--metric", "exact_match", "--margin", "0.05")
    assert run.exit_code == 2, run.output
    assert f"{candidate}: Item {first!r} is ok for exact_match with the value {shown}" in (
        run.output
    )
    assert "not worse" not in run.output
    with pytest.raises(ResultsFormatError, match=f"the candidate results: Item {first!r}"):
        gate(RunResult.load_json(base), RunResult.load_json(candidate), metric="exact_match",
             margin=0.05)  # fmt: skip


def test_compare_refuses_a_score_the_metric_cannot_give(
    scored: Callable[..., Path], tmp_path: Path
) -> None:
    """compare reads the same values: the same refusal, naming the file."""
    base = scored("em", "exact_match")
    candidate = _copy(base, tmp_path / "edited")
    first = _set_ok_values(candidate, "exact_match", 5.0)
    run = invoke("compare", base, candidate)
    assert run.exit_code == 2, run.output
    assert f"{candidate}: Item {first!r} is ok for exact_match with the value 5.0" in run.output


def test_verify_names_a_score_the_metric_cannot_give(
    scored: Callable[..., Path], tmp_path: Path
) -> None:
    """verify uses the same check: the item and its impossible value are named (exit 1)."""
    candidate = _copy(scored("em", "exact_match"), tmp_path / "edited")
    first = _set_ok_values(candidate, "exact_match", 5.0)
    run = invoke("verify", candidate)
    assert run.exit_code == 1, run.output
    assert f"Item {first!r} is ok for exact_match with the value 5.0, outside [0, 1]" in (
        run.output
    )


# -- 5. every number of results.json -----------------------------------------------------------


def _edit_document(results: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(results.read_text(encoding="utf-8"))
    edit(document)
    results.write_text(json.dumps(document), encoding="utf-8")


def _top(document: dict[str, Any]) -> dict[str, Any]:
    """The first top-level measurement (one model: the copy of its by_model entry)."""
    first: dict[str, Any] = document["measurements"][0]
    return first


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "value": (lambda d: _top(d).update(value=0.123), "`value` is 0.123 in the file"),
    "interval": (lambda d: _top(d).update(ci_high=0.99), "`ci_high` is 0.99 in the file"),
    "counts": (lambda d: _top(d)["counts"].update(ok=99, fail=101),
               "`counts.ok` is 99 in the file"),
    "n": (lambda d: _top(d).update(n=3), "`n` is 3 in the file"),
    "extra": (lambda d: _top(d)["extra"].update(coverage=0.5), "`extra.coverage` is 0.5"),
    "direction": (lambda d: _top(d).update(higher_is_better=False),
                  "`higher_is_better` is False in the file"),
    "added": (lambda d: _top(d).update(p_value=0.01),
              "`p_value` (0.01) is in the file, but no recomputation gives it"),
}  # fmt: skip


@pytest.mark.parametrize("edit", list(EDITS))
def test_verify_recomputes_the_top_level_measurements(
    scored: Callable[..., Path], tmp_path: Path, edit: str
) -> None:
    """An edit of the top-level copy alone (the per-model one left) is a difference: exit 1."""
    results = _copy(scored("em", "exact_match"), tmp_path / "edited")
    change, said = EDITS[edit]
    _edit_document(results, change)
    run = invoke("verify", results)
    assert run.exit_code == 1, run.output
    assert f"default.exact_match (top-level measurements): {said}" in run.output


def test_verify_checks_the_copy_of_the_settings_in_config(
    scored: Callable[..., Path], tmp_path: Path
) -> None:
    """results.json writes each setting twice; an edit of the copy not read is named."""
    results = _copy(scored("em", "exact_match"), tmp_path / "edited")
    _edit_document(results, lambda d: d["config"].update(confidence=0.9))
    run = invoke("verify", results)
    assert run.exit_code == 1, run.output
    assert "`config.confidence` is 0.9 but `settings.confidence` is 0.95" in run.output


def test_verify_names_what_it_does_not_check(scored: Callable[..., Path]) -> None:
    """Timings and versions cannot be recomputed: verify lists them, and still agrees."""
    results = scored("em", "exact_match")
    run = invoke("verify", results)
    assert run.exit_code == 0, run.output
    assert "Not checked" in run.output
    assert "provenance: created, duration_s" in run.output
    verdict = json.loads(invoke("verify", results, "--json").output)
    assert verdict["agree"] is True
    assert {"provenance.created", "provenance.duration_s", "settings.executor",
            "config.metrics[].version"} <= set(verdict["not_checked"])  # fmt: skip
    assert not any(f.startswith(("measurements", "by_model")) for f in verdict["not_checked"])


# -- 9. an items file far larger than the results declare -----------------------------------

#: Rows of the bloated items file: one row repeated, a few KB of Parquet.
BLOATED = 200_000


def _bloat(results: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """The items file rewritten as ``BLOATED`` copies of its first row, its hash recorded."""
    path = results.parent / "items.parquet"
    first = pq.read_table(path).slice(0, 1)
    pq.write_table(first.take(pa.array([0] * BLOATED, pa.int64())), path)
    assert path.stat().st_size < 100_000  # tiny on disk, huge once read
    _rehash(results)
    if edit is not None:
        _edit_document(results, edit)
    return results


def _never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the file's rows fails the test: a refusal must come before it."""
    from itemscore.engine._table import RunTable

    def read(*_: object, **__: object) -> None:
        raise AssertionError("the items file's rows were read")

    monkeypatch.setattr(RunTable, "from_parquet", read)


@pytest.mark.parametrize("command", ["verify", "rescore"])
def test_more_rows_than_declared_are_refused_before_reading(
    scored: Callable[..., Path], tmp_path: Path, command: str
) -> None:
    """200,000 rows against results declaring 200: exit 2, saying nothing was read."""
    results = _bloat(_copy(scored("em", "exact_match"), tmp_path / "bloated"))
    run = invoke(command, results)
    assert run.exit_code == 2, run.output
    assert (
        f"{results}: items.parquet holds {BLOATED} rows by its Parquet footer, but the "
        f"results declare {N_ITEMS} items; it was refused before any row was read."
    ) in run.output


def test_the_refusal_comes_before_any_row_is_read(
    scored: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_json (and so view, rescore, verify) refuses from the footer alone."""
    results = _bloat(_copy(scored("em", "exact_match"), tmp_path / "bloated"))
    _never_read(monkeypatch)
    with pytest.raises(ResultsFormatError, match="refused before any row was read"):
        RunResult.load_json(results)


def test_a_count_raised_to_match_is_caught_by_the_measurements(
    scored: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """items.count edited to the file's rows: the measurements still count 200 items."""
    results = _bloat(
        _copy(scored("em", "exact_match"), tmp_path / "bloated"),
        lambda d: d["items"].update(count=BLOATED),
    )
    _never_read(monkeypatch)
    with pytest.raises(ResultsFormatError) as caught:
        RunResult.load_json(results)
    said = (
        f"`items.count` ({BLOATED}) disagrees with the measurement 'default.exact_match', "
        f"which counts {N_ITEMS} items"
    )
    assert said in str(caught.value)


def test_a_missing_count_is_refused(
    scored: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without items.count nothing bounds the file: refused, not read to its end."""
    results = _bloat(
        _copy(scored("em", "exact_match"), tmp_path / "bloated"),
        lambda d: d["items"].pop("count"),
    )
    _never_read(monkeypatch)
    with pytest.raises(ResultsFormatError, match="records no item count"):
        RunResult.load_json(results)
    assert invoke("verify", results).exit_code == 2


def test_the_viewer_refuses_the_bloated_set(scored: Callable[..., Path], tmp_path: Path) -> None:
    """view loads a run through the same reader: the same refusal, no table built."""
    from itemscore.viewer._runs import Runs

    _bloat(_copy(scored("em", "exact_match"), tmp_path / "sets" / "bloated"))
    runs = Runs([tmp_path / "sets"])
    (run,) = runs.runs()
    with pytest.raises(ResultsFormatError, match="refused before any row was read"):
        runs.load(run)


def test_a_table_read_with_a_bound_stops_at_the_footer(
    scored: Callable[..., Path], tmp_path: Path
) -> None:
    """RunTable.from_parquet(max_rows=...) refuses a larger file; a fitting one reads whole."""
    from itemscore.engine._table import RunTable

    results = _bloat(_copy(scored("em", "exact_match"), tmp_path / "bloated"))
    with pytest.raises(ValueError, match=f"holds {BLOATED} rows, more than 10"):
        RunTable.from_parquet(results.parent / "items.parquet", max_rows=10)
    table = RunTable.from_parquet(results.parent / "items.parquet", max_rows=BLOATED)
    assert len(table.key("id")) == BLOATED
