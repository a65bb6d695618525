"""lm-evaluation-harness samples files as items, read from logs lm-eval itself wrote.

The logs under tests/data/harness/lm-eval/ come from `lm_eval run --log_samples` on two scripted
models (tests/data/harness/make_logs.py; versions in the README there).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import itemscore
from itemscore import ConfigError, InputError, ItemResult
from itemscore.inputs.lm_eval import read_lm_eval

RUNS = Path(__file__).parent / "data" / "harness" / "lm-eval" / "results"
GEN_A = next((RUNS / "scripted-a").glob("samples_capitals_gen_*.jsonl"))
MC_A = next((RUNS / "scripted-a").glob("samples_science_mc_*.jsonl"))
GEN_B = next((RUNS / "scripted-b").glob("samples_capitals_gen_*.jsonl"))

PROMPTS = [
    "Question: What is the capital of France?\nAnswer:",
    "Question: How many legs does a spider have?\nAnswer:",
    "Question: Who wrote Hamlet?\nAnswer:",
    "Question: What is the chemical symbol for gold?\nAnswer:",
]
EXPECTED = [["Paris"], ["8", "eight"], ["William Shakespeare", "Shakespeare"], ["Au"]]
EXPECTED_TUPLES = [tuple(e) for e in EXPECTED]


def records_of(path: Any, **options: Any) -> list[dict[str, Any]]:
    """The reader's records, as a list (the reader yields them as it reads)."""
    return list(read_lm_eval(path, **options))


def roles(record: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("id", "model", "input", "output", "expected", "group")
    return tuple(record[k] for k in keys)


def to_item(record: dict[str, Any]) -> ItemResult:
    keys = ("id", "model", "input", "output", "expected", "group")
    return ItemResult(
        **{k: record[k] for k in keys if k != "expected"},
        expected=tuple(record["expected"]) if record["expected"] is not None else None,
        metadata={k: v for k, v in record.items() if k not in keys},
    )


def copy_run(tmp_path: Path, *files: Path) -> list[Path]:
    return [Path(shutil.copy(f, tmp_path / f.name)) for f in files]


# -- generate_until ------------------------------------------------------------------------


def test_generate_until_lines_become_items_field_by_field() -> None:
    """doc_id, the results file's model, the prompt, the filtered answer and the target list."""
    records = records_of(GEN_A)
    assert [roles(r) for r in records] == [
        ("0", "scripted-a", PROMPTS[0], "Paris", EXPECTED[0], "capitals_gen"),
        ("1", "scripted-a", PROMPTS[1], "eight", EXPECTED[1], "capitals_gen"),
        ("2", "scripted-a", PROMPTS[2], "Christopher Marlowe", EXPECTED[2], "capitals_gen"),
        ("3", "scripted-a", PROMPTS[3], "Au", EXPECTED[3], "capitals_gen"),
    ]
    first = records[0]
    assert first["completion"] == "The capital of France is Paris.\nANSWER: Paris"
    assert first["answer"] == "Paris"
    assert first["filter"] == "strict-match"
    assert first["task"] == "capitals_gen"
    assert first["doc_id"] == 0
    assert first["doc"] == {
        "id": "q1",
        "question": "What is the capital of France?",
        "answers": ["Paris"],
        "subject": "geography",
    }
    assert [r["exact_match"] for r in records] == [1.0, 1.0, 0.0, 1.0]


def test_target_list_is_read_back_from_its_python_text() -> None:
    """lm-eval writes a list target as "['8', 'eight']"; each answer becomes one valid answer."""
    line = json.loads(GEN_A.read_text().splitlines()[1])
    assert line["target"] == "['8', 'eight']"  # the trap, as lm-eval writes it
    assert records_of(GEN_A)[1]["expected"] == ["8", "eight"]


def test_the_filter_lm_eval_scored_is_the_default_output() -> None:
    """The first filter (strict-match) is read; the raw completion stays in metadata."""
    records = records_of(GEN_B)
    assert [r["output"] for r in records] == ["paris", "[invalid]", "Shakespeare", "[invalid]"]
    assert [r["completion"] for r in records] == [
        "ANSWER: paris",
        "I think it is six.",
        "ANSWER: Shakespeare",
        "",
    ]
    assert {r["filter"] for r in records} == {"strict-match"}
    assert [r["model"] for r in records] == ["scripted-b"] * 4


def test_another_filter_can_be_chosen() -> None:
    """filter="raw" reads the other lines of each document."""
    records = records_of(GEN_A, filter="raw")
    assert [r["id"] for r in records] == ["0", "1", "2", "3"]
    assert records[0]["output"] == "The capital of France is Paris.\nANSWER: Paris"
    assert [r["filter"] for r in records] == ["raw"] * 4
    assert [r["exact_match"] for r in records] == [0.0] * 4


def test_output_completion_takes_the_response_as_generated() -> None:
    """output="completion" gives resps, keeping the filtered answer in metadata."""
    records = records_of(GEN_B, output="completion")
    assert records[1]["output"] == "I think it is six."
    assert records[1]["answer"] == "[invalid]"


def test_exact_match_agrees_with_lm_evals_own_scores() -> None:
    """itemscore's exact_match on the items gives lm-eval's per-document exact_match."""
    for path in (GEN_A, GEN_B):
        records = records_of(path)
        result = itemscore.score([to_item(r) for r in records], ["exact_match"], suite_id="lm")
        got = [1.0 if i.scores["exact_match"].status == "ok" else 0.0 for i in result.items]
        assert got == [r["exact_match"] for r in records]


# -- multiple_choice -----------------------------------------------------------------------


def test_multiple_choice_compares_indices_as_lm_eval_does() -> None:
    """The output is the index of the most likely choice, the expected one the target index."""
    records = records_of(MC_A)
    assert [roles(r) for r in records] == [
        ("0", "scripted-a", "Question: Which planet is largest?\nAnswer:", "1", ["1"],
         "science_mc"),
        ("1", "scripted-a", "Question: Which gas do plants take in?\nAnswer:", "0", ["2"],
         "science_mc"),
        ("2", "scripted-a", "Question: What is 7 x 6?\nAnswer:", "0", ["0"], "science_mc"),
    ]  # fmt: skip
    assert [r["answer"] for r in records] == ["Jupiter", "Oxygen", "42"]
    first = records[0]
    assert first["target"] == "1"  # the trap: an index, written as text
    assert first["choices"] == ["Mars", "Jupiter", "Venus", "Mercury"]
    assert first["loglikelihoods"] == [-1.5, -0.25, -2.5, -3.0]
    assert [r["acc"] for r in records] == [1.0, 0.0, 1.0]


def test_accuracy_agrees_with_lm_evals_acc() -> None:
    """exact_match between chosen and right choice gives lm-eval's acc per document."""
    records = records_of(MC_A)
    result = itemscore.score([to_item(r) for r in records], ["exact_match"], suite_id="lm")
    got = [1.0 if i.scores["exact_match"].status == "ok" else 0.0 for i in result.items]
    assert got == [r["acc"] for r in records]


def test_multiple_choice_without_results_file_is_told_by_its_responses(tmp_path: Path) -> None:
    """Without the task config, (log-likelihood, greedy) pairs per choice mean multiple choice."""
    (copy,) = copy_run(tmp_path, MC_A)
    records = records_of(copy)
    assert [r["output"] for r in records] == ["1", "0", "0"]
    assert [r["expected"] for r in records] == [["1"], ["2"], ["0"]]
    assert [r["answer"] for r in records] == ["Jupiter", "Oxygen", "42"]


# -- the model's name ----------------------------------------------------------------------


def test_model_comes_from_the_results_file_of_the_same_run() -> None:
    """The samples file never names the model; results_TIMESTAMP.json beside it does."""
    assert "scripted-a" not in GEN_A.read_text()
    assert {r["model"] for r in records_of(GEN_A)} == {"scripted-a"}
    assert {r["model"] for r in records_of(GEN_B)} == {"scripted-b"}


def test_without_a_results_file_the_model_is_unnamed_or_given(tmp_path: Path) -> None:
    """A lone samples file has no model unless model= names it."""
    (copy,) = copy_run(tmp_path, GEN_A)
    assert {r["model"] for r in records_of(copy)} == {None}
    assert {r["model"] for r in records_of(copy, model="gpt-x")} == {"gpt-x"}
    assert records_of(copy)[0]["group"] == "capitals_gen"


def test_a_renamed_samples_file_finds_the_only_results_file(tmp_path: Path) -> None:
    """A samples file renamed by hand still pairs with the one results file beside it."""
    results = next((RUNS / "scripted-a").glob("results_*.json"))
    shutil.copy(results, tmp_path / results.name)
    shutil.copy(GEN_A, tmp_path / "mine.jsonl")
    records = records_of(tmp_path / "mine.jsonl")
    assert {r["model"] for r in records} == {"scripted-a"}


def test_model_falls_back_to_model_args(tmp_path: Path) -> None:
    """An older results file without model_name: pretrained= in model_args names the model."""
    results = next((RUNS / "scripted-b").glob("results_*.json"))
    data = json.loads(results.read_text())
    del data["model_name"]
    (tmp_path / results.name).write_text(json.dumps(data))
    (copy,) = copy_run(tmp_path, GEN_B)
    assert records_of(copy)[0]["model"] == "scripted-b"


# -- errors --------------------------------------------------------------------------------


def test_bad_json_names_file_line_and_column(tmp_path: Path) -> None:
    """A broken line is an InputError at FILE:LINE:COLUMN."""
    lines = GEN_A.read_text().splitlines()
    lines[2] = lines[2][:40]
    path = tmp_path / GEN_A.name
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"^{path}:3:\d+: task .capitals_gen.: not valid JSON"):
        records_of(path)


def test_a_line_that_is_not_an_lm_eval_sample_is_named(tmp_path: Path) -> None:
    """A JSON lines file of other rows says which key is missing, on which line."""
    path = tmp_path / "outputs.jsonl"
    path.write_text('{"id": 1, "output": "x"}\n')
    with pytest.raises(InputError, match=r"outputs.jsonl:1: the line has no 'doc_id'"):
        records_of(path)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    """No lines: nothing to score is an error, not an empty result."""
    path = tmp_path / "samples_x_2026-01-01T00-00-00.000000.jsonl"
    path.write_text("\n")
    with pytest.raises(InputError, match="empty"):
        records_of(path)


def test_unknown_filter_lists_the_files_filters() -> None:
    """A filter the file lacks is a ConfigError with the filters and a did-you-mean."""
    with pytest.raises(ConfigError, match=r"'strict-match', 'raw'.*Did you mean 'strict-match'"):
        records_of(GEN_A, filter="strict_match")


def test_unknown_output_option() -> None:
    """output= takes answer or completion."""
    with pytest.raises(ConfigError, match=r"`output` \('answers'\) must be one of"):
        records_of(GEN_A, output="answers")  # type: ignore[arg-type]


def test_target_index_out_of_range_is_that_documents_error(tmp_path: Path) -> None:
    """A multiple-choice target beyond the choices is an error record at its line, not the end."""
    lines = MC_A.read_text().splitlines()
    row = json.loads(lines[1])
    row["target"] = "7"
    lines[1] = json.dumps(row)
    (copy,) = copy_run(tmp_path, MC_A)
    copy.write_text("\n".join(lines) + "\n")
    records = records_of(copy)
    assert len(records) == 3
    assert re.search(
        r":2: task 'science_mc': the target index 7 is out of range", records[1]["error"]
    )
    assert "error" not in records[0]
    assert "error" not in records[2]


def test_loglikelihood_tasks_have_no_text_to_score(tmp_path: Path) -> None:
    """A task whose output type gives no text (loglikelihood) is refused with the reason."""
    results = next((RUNS / "scripted-a").glob("results_*.json"))
    data = json.loads(results.read_text())
    data["configs"]["science_mc"]["output_type"] = "loglikelihood"
    (tmp_path / results.name).write_text(json.dumps(data))
    (copy,) = copy_run(tmp_path, MC_A)
    with pytest.raises(InputError, match=r":1: task 'science_mc': the task has output type"):
        records_of(copy)


def test_broken_results_file_is_named(tmp_path: Path) -> None:
    """The results file beside the samples is read too; a broken one is named."""
    results = next((RUNS / "scripted-a").glob("results_*.json"))
    (tmp_path / results.name).write_text("{")
    (copy,) = copy_run(tmp_path, GEN_A)
    with pytest.raises(InputError, match=rf"{results.name}:1:2: not valid JSON"):
        records_of(copy)


# -- through read_items and the command line -----------------------------------------------


def test_read_items_with_format_lm_eval() -> None:
    """read_items(format="lm-eval") gives items; reader options pass through."""
    items = itemscore.read_items(GEN_A, format="lm-eval")
    assert [(i.id, i.model, i.output, i.expected, i.group) for i in items] == [
        ("0", "scripted-a", "Paris", ("Paris",), "capitals_gen"),
        ("1", "scripted-a", "eight", ("8", "eight"), "capitals_gen"),
        ("2", "scripted-a", "Christopher Marlowe", EXPECTED_TUPLES[2], "capitals_gen"),
        ("3", "scripted-a", "Au", ("Au",), "capitals_gen"),
    ]
    assert items[0].input == PROMPTS[0]
    assert items[0].metadata["completion"] == "The capital of France is Paris.\nANSWER: Paris"
    assert items[0].metadata["doc"]["subject"] == "geography"
    raw = itemscore.read_items(GEN_A, format="lm-eval", filter="raw")
    assert raw[0].output == "The capital of France is Paris.\nANSWER: Paris"


def test_read_items_refuses_an_unknown_reader_option() -> None:
    """An option the lm-eval reader does not take is a ConfigError naming its options."""
    with pytest.raises(ConfigError, match=r"no option 'filters'.*Did you mean 'filter'"):
        itemscore.read_items(GEN_A, format="lm-eval", filters="raw")


def test_command_line_scores_an_lm_eval_samples_file() -> None:
    """`itemscore score FILE --format lm-eval` gives lm-eval's own exact_match."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    args = ["score", str(GEN_A), "--format", "lm-eval", "-m", "exact_match", "--json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (measurement,) = json.loads(result.output)["measurements"]
    assert measurement["model"] == "scripted-a"
    assert measurement["value"] == 0.75  # lm-eval's own strict-match exact_match for this run


HOSTILE = st.one_of(
    st.text(),
    st.sampled_from(["\ud800", "[bold red]x[/]", "=cmd()", "\x00\x85\u2028", '"},{"', "['x'"]),
)


@settings(max_examples=60, deadline=None)
@given(strings=st.lists(HOSTILE, min_size=3, max_size=3))
def test_hostile_text_is_read_as_it_is_or_named(strings: list[str]) -> None:
    """Any text in a real line's response, target and prompt: read as it is, or an InputError."""
    answer, target, prompt = strings
    row = json.loads(GEN_A.read_text().splitlines()[0])
    row["filtered_resps"] = [answer]
    row["target"] = target
    row["arguments"]["gen_args_0"]["arg_0"] = prompt
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / GEN_A.name
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        try:
            records = records_of(path)
        except InputError as exc:
            message = str(exc)
        else:
            message = ""
    if message:
        assert message.startswith(f"{path}:1"), message
        assert "\ud800" in "".join(strings), message  # only a lone surrogate is refused
        return
    (record,) = records
    assert record["output"] == answer
    assert record["input"] == prompt
    assert all(isinstance(t, str) for t in record["expected"] or [])


def test_a_samples_file_is_recognised_without_format(tmp_path: Path) -> None:
    """A .jsonl file whose lines are lm-eval samples needs no --format; data files stay jsonl."""
    from itemscore.inputs import detect_format

    assert detect_format(GEN_A) == "lm-eval"
    assert detect_format(MC_A) == "lm-eval"
    assert [i.output for i in itemscore.read_items(GEN_B)][:2] == ["paris", "[invalid]"]
    data = tmp_path / "outputs.jsonl"
    data.write_text('{"id": "1", "output": "x", "doc_id": 0, "arguments": [], "resps": [], '
                    '"filtered_resps": []}\n')  # fmt: skip
    assert detect_format(data) == "jsonl"  # it has an output: a data file
    assert detect_format(tmp_path / "missing.jsonl") == "jsonl"  # the reader will say why
    assert detect_format(GEN_A, "jsonl") == "jsonl"  # a named format always wins


def _first_line(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return loaded


def _set(row: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    return {**row, key: value}


MALFORMED_GEN = [
    ("arguments-empty", lambda r: _set(r, "arguments", {}), "'arguments' is empty"),
    ("arguments-text", lambda r: _set(r, "arguments", "x"), "'arguments' must be an object"),
    ("resps-text", lambda r: _set(r, "resps", "x"), "'resps' and 'filtered_resps' must be"),
    ("doc-id-float", lambda r: _set(r, "doc_id", 1.5), "'doc_id' must be a whole number"),
    ("response-object", lambda r: _set(r, "filtered_resps", [{"a": 1}]), "must hold the gen"),
    ("target-object", lambda r: _set(r, "target", {"a": 1}), "'target' must be a text"),
]
MALFORMED_MC = [
    ("loglik-text", lambda r: _set(r, "filtered_resps", [["x", "False"]] * 4), "log-likelihood"),
    ("too-few", lambda r: _set(r, "filtered_resps", [["-1", "False"]] * 3), "3 responses for 4"),
    (
        "no-continuation",
        lambda r: _set(r, "arguments", {f"gen_args_{i}": {"arg_0": "q"} for i in range(4)}),
        "a context and a continuation",
    ),
]


@pytest.mark.parametrize(
    ("source", "change", "message"),
    [(GEN_A, c, m) for _, c, m in MALFORMED_GEN] + [(MC_A, c, m) for _, c, m in MALFORMED_MC],
    ids=[i for i, _, _ in MALFORMED_GEN + MALFORMED_MC],
)
def test_malformed_lines_name_file_and_line(
    tmp_path: Path, source: Path, change: Any, message: str
) -> None:
    """A real line with one field broken is that document's error at FILE:LINE; the rest is read."""
    results = next(source.parent.glob("results_*.json"))
    shutil.copy(results, tmp_path / results.name)
    path = tmp_path / source.name
    lines = source.read_text().splitlines()
    first_filter = json.loads(lines[0])["filter"]
    kept = [n for n, line in enumerate(lines) if json.loads(line)["filter"] == first_filter]
    lines[kept[2]] = json.dumps(change(json.loads(lines[kept[2]])))
    path.write_text("\n".join(lines) + "\n")
    records = records_of(path)
    assert len(records) == len(kept)
    task = source.name.split("_2026")[0].removeprefix("samples_")
    bad = records[2]
    at = rf"^{re.escape(str(path))}:{kept[2] + 1}: task '{task}': .*{message}"
    assert re.match(at, bad["error"]), bad["error"]
    assert bad["output"] is None
    assert bad["group"] == task
    assert bad["model"] == "scripted-a"
    assert all("error" not in r for i, r in enumerate(records) if i != 2)


def test_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    """A JSON value other than an object on a line is named."""
    path = tmp_path / "samples.jsonl"
    path.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"samples.jsonl:1: each line must be a JSON object"):
        records_of(path)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are named with their line."""
    path = tmp_path / "samples.jsonl"
    path.write_bytes(GEN_A.read_bytes().replace(b"Paris", b"Par\xe9s", 1))
    with pytest.raises(InputError, match=r"samples.jsonl:1: the file is not valid UTF-8"):
        records_of(path)


def test_older_list_layout_of_arguments(tmp_path: Path) -> None:
    """Older lm-eval versions wrote arguments as a list of [context, continuation] lists."""
    rows = [json.loads(line) for line in MC_A.read_text().splitlines()]
    for row in rows:
        row["arguments"] = [[a["arg_0"], a["arg_1"]] for a in row["arguments"].values()]
    path = tmp_path / "samples_science_mc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    records = records_of(path, model="m")
    assert [(r["answer"], r["output"], r["expected"]) for r in records] == [
        ("Jupiter", "1", ["1"]),
        ("Oxygen", "0", ["2"]),
        ("42", "0", ["0"]),
    ]
    assert records[0]["input"] == "Question: Which planet is largest?\nAnswer:"


def test_results_file_that_is_not_an_object(tmp_path: Path) -> None:
    """A results file holding a list is named."""
    results = next((RUNS / "scripted-a").glob("results_*.json"))
    (tmp_path / results.name).write_text("[]")
    (copy,) = copy_run(tmp_path, GEN_A)
    with pytest.raises(InputError, match=r"results file holds one JSON object"):
        records_of(copy)


def test_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    """A line nested too deeply for the JSON parser is named, not a crash; nor is it sniffed."""
    from itemscore.inputs import detect_format

    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n")
    assert detect_format(path) == "jsonl"
    path.write_text('{"a": ' + "[" * 100_000 + "\n")
    assert detect_format(path) == "jsonl"
    with pytest.raises(InputError, match=r"deep.jsonl:1: "):
        records_of(path)


# -- the cases lm-eval scores its own way (logs in lm-eval-cases/) ---------------------------

CASES = Path(__file__).parent / "data" / "harness" / "lm-eval-cases" / "results" / "scripted-a"


def case(task: str) -> Path:
    return next(CASES.glob(f"samples_{task}_*.jsonl"))


def test_doc_to_choice_generation_expects_the_indexed_choice() -> None:
    """generate_until with doc_to_choice: the target index names the choice text compared."""
    records = records_of(case("colours_choice_gen"))
    assert [(r["output"], r["expected"], r["target"]) for r in records] == [
        ("green", ["green"], "0"),
        ("White", ["white"], "1"),
        ("black", ["black"], "0"),
        ("orange", ["yellow"], "1"),
    ]
    assert [r["exact_match"] for r in records] == [1.0, 0.0, 1.0, 0.0]


def test_an_out_of_range_target_is_one_error_and_the_rest_is_read() -> None:
    """fruit_mc's f3 has label 7 of 2 choices: lm-eval warned and scored on; so does itemscore."""
    records = records_of(case("fruit_mc"))
    assert len(records) == 6
    (bad,) = [r for r in records if "error" in r]
    assert bad["id"] == "2"
    assert re.fullmatch(
        rf"{re.escape(str(case('fruit_mc')))}:3: task 'fruit_mc': the target index 7 is out of "
        r"range: the document has 2 choices \(lm-eval warned and scored it 0\)\.",
        bad["error"],
    )
    assert (bad["output"], bad["group"], bad["model"]) == (None, "fruit_mc", "scripted-a")
    with pytest.warns(UserWarning, match=r"1 of 6 documents could not be read"):
        items = itemscore.read_items(case("fruit_mc"), format="lm-eval")
    assert [i.id for i in items] == ["0", "1", "2", "3", "4", "5"]
    assert items[2].metadata["error"] == bad["error"]
    harness = records_of(case("fruit_mc"), rules="harness")[2]
    assert (harness["output"], harness["expected"]) == ("0", ["7"])  # no choice is right


def test_case_different_choices_are_told_apart_by_index() -> None:
    """Picking 'apple' where 'Apple' is right is wrong, as lm-eval's acc says."""
    first = records_of(case("fruit_mc"))[0]
    assert first["choices"] == ["apple", "Apple", "banana"]
    assert (first["output"], first["expected"], first["answer"], first["acc"]) == (
        "0",
        ["1"],
        "apple",
        0.0,
    )


def test_the_task_group_is_kept() -> None:
    """A task run inside a group names it (results file's group_subtasks)."""
    assert {r["task_group"] for r in records_of(case("fruit_mc"))} == {"fruit_group"}
    assert "task_group" not in records_of(case("strict_gen"))[0]


def test_repeats_are_attempts_of_the_completion() -> None:
    """repeats: 3: output=completion gives each response as an attempt; the answer is one."""
    attempts = records_of(case("repeat_gen"), output="completion")
    assert [(r["id"].partition("#")[0], r["attempt"], r["output"]) for r in attempts[:3]] == [
        ("0", 1, "ANSWER: 3,000"),
        ("0", 2, "ANSWER: 3000"),
        ("0", 3, "ANSWER: 30"),
    ]
    assert len(attempts) == 12
    voted = records_of(case("repeat_gen"))
    assert [r["output"] for r in voted] == ["3,000", "6", "seine!", "dog"]
    assert voted[0]["completions"] == ["ANSWER: 3,000", "ANSWER: 3000", "ANSWER: 30"]
    assert "attempt" not in voted[0]


def test_task_metric_options_travel_in_the_harness_rule() -> None:
    """regexes_to_ignore, ignore_case, ignore_punctuation of the task's exact_match are kept."""
    rule = records_of(case("strict_gen"), rules="harness")[0]["harness_rule"]
    assert rule == {
        "harness": "lm-eval",
        "scorer": "exact_match",
        "kind": "exact_match",
        "ignore_case": True,
        "ignore_punctuation": True,
        "regexes_to_ignore": [",", "\\$", "(?s).*ANSWER: "],
    }
    assert "harness_rule" not in records_of(case("strict_gen"))[0]
    with pytest.raises(ConfigError, match=r"rules='harness' compares what lm-eval compared"):
        records_of(case("strict_gen"), rules="harness", output="completion")


def test_pick_and_rules_are_checked() -> None:
    """pick= and rules= take only their values, with did-you-mean."""
    with pytest.raises(ConfigError, match=r"`pick` \('acc_nrom'\) must be one of .*Did you mean"):
        records_of(MC_A, pick="acc_nrom")
    with pytest.raises(ConfigError, match=r"`rules` \('harnes'\) must be one of"):
        records_of(MC_A, rules="harnes")


# -- bounds -----------------------------------------------------------------------------------


def test_a_target_too_long_to_parse_is_exit_2_at_its_line(tmp_path: Path) -> None:
    """100k unary minus in a list target: an InputError naming file and line, not MemoryError."""
    lines = GEN_A.read_text().splitlines()
    row = json.loads(lines[2])
    row["target"] = "[" + "-" * 100_000 + "1]"
    lines[2] = json.dumps(row)
    (copy,) = copy_run(tmp_path, GEN_A)
    copy.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(copy))}:3: task 'capitals_gen': "):
        records_of(copy)
    with pytest.raises(InputError, match=r"more than the 65536 itemscore parses"):
        records_of(copy)
    from click.testing import CliRunner

    from itemscore.cli import cli

    args = ["score", str(copy), "--format", "lm-eval", "-m", "exact_match"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"{copy}:3: task 'capitals_gen': 'target' is a text of 100003 characters" in (
        result.output
    )


def test_a_short_target_the_parser_chokes_on_is_kept_as_text(tmp_path: Path) -> None:
    """Nesting the parser refuses (MemoryError inside it) leaves the target as its text."""
    lines = GEN_A.read_text().splitlines()
    row = json.loads(lines[0])
    row["target"] = "[" + "-" * 10_000 + "1]"
    lines[0] = json.dumps(row)
    (copy,) = copy_run(tmp_path, GEN_A)
    copy.write_text("\n".join(lines) + "\n")
    assert records_of(copy)[0]["expected"] == [row["target"]]


def test_a_line_past_the_bound_is_refused_at_its_line(tmp_path: Path) -> None:
    """A line longer than max_sample_bytes is named (file, line), never read whole."""
    lines = GEN_A.read_text().splitlines()
    (copy,) = copy_run(tmp_path, GEN_A)
    copy.write_text("\n".join([lines[0], "x" * 5000, *lines[1:]]) + "\n")
    with pytest.raises(InputError, match=rf"^{re.escape(str(copy))}:2: .*longer than the bound"):
        records_of(copy, max_sample_bytes=4096)


def test_a_samples_file_is_read_as_it_is_iterated(tmp_path: Path) -> None:
    """The reader yields each record before reading the next line (a broken tail comes later)."""
    lines = GEN_A.read_text().splitlines()
    (copy,) = copy_run(tmp_path, GEN_A)
    copy.write_text("\n".join([*lines, "{broken"]) + "\n")
    records = read_lm_eval(copy)
    assert next(records)["id"] == "0"
    with pytest.raises(
        InputError, match=rf":{len(lines) + 1}:2: task .capitals_gen.: not valid JSON"
    ):
        list(records)


def test_a_lone_surrogate_after_the_first_line_is_that_documents_error(tmp_path: Path) -> None:
    """A text no report can write is one item's error; the other documents are read."""
    lines = GEN_A.read_text().splitlines()
    (copy,) = copy_run(tmp_path, GEN_A)
    lines[2] = lines[2].replace('"target": "', '"target": "\\ud800', 1)
    copy.write_text("\n".join(lines) + "\n")
    records = records_of(copy)
    assert len(records) == 4
    assert re.match(
        rf"{re.escape(str(copy))}:3: task 'capitals_gen': the text .* holds a lone surrogate",
        records[2]["error"],
    )
    assert records[2]["id"] == "line 3"  # nothing of it is read: not even its doc_id
    assert "\ud800" not in json.dumps(records, ensure_ascii=False)


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_a_large_samples_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """60 MB of samples: reading every record grows the peak by far less than the file."""
    lines = [json.loads(line) for line in GEN_A.read_text().splitlines()]
    row = next(r for r in lines if r["filter"] == "strict-match")
    path = tmp_path / GEN_A.name
    with path.open("w") as out:
        for n in range(12_000):
            out.write(json.dumps(row | {"doc_id": n, "resps": [["x" * 5000]]}) + "\n")
    script = (
        "import resource, sys\n"
        "from itemscore.inputs.lm_eval import read_lm_eval\n"
        "records = read_lm_eval(sys.argv[1])\n"
        "first = next(records)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "count = 1 + sum(1 for _ in records)\n"
        "print(count, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    count, grown_kib = map(int, done.stdout.split())
    assert count == 12_000
    assert path.stat().st_size > 60_000_000
    assert grown_kib < 20_000  # the whole file read at once grew it by about 300 MB
