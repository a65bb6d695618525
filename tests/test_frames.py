"""pandas in and out: DataFrames as items, results as DataFrames, pandas optional."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import itemscore
from itemscore import ConfigError, InputError, ItemResult, Suite
from itemscore.inputs import to_items

pd = pytest.importorskip("pandas")


def test_a_dataframe_scores_like_the_same_rows_from_a_file(tmp_path: Path) -> None:
    """score(df) gives the items a JSON lines file of the same rows gives."""
    frame = pd.DataFrame(
        {
            "id": ["a", "b", "c"],
            "output": ["Paris", None, "Rome"],
            "expected": ["Paris", "Berlin", "Roma"],
            "cost": [0.5, float("nan"), 2.0],
        }
    )
    path = tmp_path / "d.jsonl"
    frame.to_json(path, orient="records", lines=True)
    from_file = itemscore.read_items(path)
    assert to_items(frame) == from_file
    result = itemscore.score(frame, ["exact_match"])
    assert result.measurements["default.exact_match"].counts["ok"] == 1
    assert result.items[1].output is None
    assert result.items[1].metadata["cost"] is None


def test_nan_and_na_mean_missing_everywhere() -> None:
    """NaN, None, pd.NA and NaT: a failed request, no answer key, no group, None metadata."""
    frame = pd.DataFrame(
        {
            "output": pd.array(["x", pd.NA, None], dtype="object"),
            "expected": [float("nan"), "y", None],
            "group": pd.array(["g", pd.NA, "h"], dtype="string"),
            "when": [pd.Timestamp("2024-01-01"), pd.NaT, pd.NaT],
        }
    )
    items = to_items(frame)
    assert [i.output for i in items] == ["x", None, None]
    assert [i.expected for i in items] == [None, ("y",), None]
    assert [i.group for i in items] == ["g", None, "h"]
    assert [i.metadata["when"] is None for i in items] == [False, True, True]
    assert [i.id for i in items] == ["1", "2", "3"]


def test_numbers_from_a_frame_follow_the_file_rules() -> None:
    """An integer id column with a gap turns float in pandas: 7.0 is still id "7"."""
    frame = pd.DataFrame({"id": [7, 8], "output": [0.5, 3]})
    items = to_items(frame)
    assert [i.id for i in items] == ["7", "8"]
    assert [i.output for i in items] == ["0.5", "3.0"]


def test_a_column_mapping_applies_to_frames_and_dicts() -> None:
    """columns= names the role columns; the header is checked with a did-you-mean."""
    frame = pd.DataFrame({"qid": ["q1"], "response": ["x"], "gold": ["x"]})
    result = itemscore.score(
        frame, ["exact_match"], columns={"id": "qid", "output": "response", "expected": "gold"}
    )
    assert result.items[0].id == "q1"
    assert result.measurements["default.exact_match"].value == 1.0
    rows = frame.to_dict("records")
    assert (
        itemscore.score(
            rows, ["exact_match"], columns={"id": "qid", "output": "response", "expected": "gold"}
        ).items
        == result.items
    )
    with pytest.raises(
        InputError, match=r"DataFrame: the file has no column 'respons'.*'response'"
    ):
        to_items(frame, {"output": "respons"})


def test_run_takes_a_frame_for_the_default_suite() -> None:
    """run(suite, df, columns=...) maps the rows before the suite's items()."""

    class Qa(Suite):
        suite_id = "qa"
        metrics = ("exact_match",)

    frame = pd.DataFrame({"answer": ["a", "b"], "expected": ["a", "c"]})
    result = itemscore.run(Qa(), frame, columns={"output": "answer"})
    assert result.measurements["qa.exact_match"].value == 0.5


def test_duplicate_ids_in_a_frame_name_both_rows() -> None:
    """Ids are checked in the one place every source goes through."""
    frame = pd.DataFrame({"id": ["a", "a"], "output": ["x", "y"]})
    with pytest.raises(
        InputError, match=r"DataFrame: row 2: the id 'a' appears twice \(first at row 1\)"
    ):
        to_items(frame)


def test_dicts_are_items_as_a_file_row_would_be() -> None:
    """score() takes plain dicts (the DataFrame.to_dict("records") shape)."""
    result = itemscore.score([{"id": 1, "output": "x", "expected": "x"}], ["exact_match"])
    assert result.items[0].id == "1"
    assert result.items[0].expected == ("x",)


def _result() -> itemscore.RunResult:
    items = [
        ItemResult(id="1", output="x", expected="x", group="g1", model="m", metadata={"c": 1}),
        ItemResult(id="2", output=None, expected="y", group="g2", model="m"),
        ItemResult(id="1", output="y", expected="x", group="g1", model="n", metadata={"id": 5}),
    ]
    return itemscore.score(items, ["exact_match", "answered_rate"], suite_id="qa")


def test_items_df_has_one_row_per_item_and_metric() -> None:
    """Three items and two metrics: six rows, with status, value and metadata columns."""
    frame = _result().items_df()
    assert len(frame) == 6
    assert list(frame.columns[:12]) == [
        "id",
        "model",
        "group",
        "output",
        "expected",
        "input",
        "cluster",
        "attempt",
        "metric",
        "status",
        "value",
        "reason",
    ]
    first = frame.iloc[0]
    assert (first["id"], first["metric"], first["status"], first["value"]) == (
        "1",
        "exact_match",
        "ok",
        1.0,
    )
    assert first["expected"] == ["x"]
    assert frame["c"].tolist()[:2] == [1, 1]
    assert frame["metadata.id"].tolist()[-1] == 5
    assert frame["value"].dtype == "float64"


def test_measurements_df_has_one_row_per_measurement_and_group() -> None:
    """Per model: the overall row (no group) then one per group; pooled rows follow."""
    result = _result()
    frame = result.measurements_df()
    m = frame[(frame["model"] == "m") & (frame["metric"] == "exact_match")]
    assert m["group"].isna().tolist() == [True, False, False]
    assert m["group"].tolist()[1:] == ["g1", "g2"]
    overall = result.by_model["m"]["qa.exact_match"]
    row = m.iloc[0]
    assert row["value"] == overall.value
    assert math.isclose(row["ci_low"], overall.ci_low)
    assert row["n_ok"] == overall.counts["ok"]
    assert row["n_fail"] == overall.counts["fail"]
    # per metric: m has overall + g1 + g2, n overall + g1, pooled overall + g1 + g2
    assert len(frame) == 2 * (3 + 2 + 3)
    assert frame["model"].isna().sum() == 2 * 3


@pytest.mark.parametrize("method", ["items_df", "measurements_df"])
def test_without_pandas_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """pandas stays optional: a clear error says what to install."""
    result = _result()
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ConfigError, match=r"pip install 'pandas>=2\.0'"):
        getattr(result, method)()
