"""inspect_ai logs (.eval and .json) as items, read from logs inspect_ai itself wrote.

The logs under tests/data/harness/inspect/ come from `inspect_ai.eval` on scripted models
(tests/data/harness/make_logs.py; versions in the README there).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import itemscore
from itemscore import ConfigError, InputError, ItemResult
from itemscore.inputs.inspect_log import read_inspect

LOGS = Path(__file__).parent / "data" / "harness" / "inspect"
QA_A = LOGS / "capitals_qa_scripted-a"
QA_B = LOGS / "capitals_qa_scripted-b"
MC_A = LOGS / "science_mc_scripted-a"
BOTH = pytest.mark.parametrize("suffix", [".eval", ".json"])

QUESTIONS = [
    "What is the capital of France?",
    "How many legs does a spider have?",
    "Who wrote Hamlet?",
    "What is the chemical symbol for gold?",
]
EXPECTED = [["Paris"], ["8", "eight"], ["William Shakespeare", "Shakespeare"], ["Au"]]
ROLES = ("id", "model", "input", "output", "expected", "group")


def records_of(path: Any, **options: Any) -> list[dict[str, Any]]:
    """The reader's records, as a list (the reader yields them as it reads)."""
    return list(read_inspect(path, **options))


def roles(record: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(record[k] for k in ROLES)


def to_item(record: dict[str, Any]) -> ItemResult:
    return ItemResult(
        **{k: record[k] for k in ROLES if k != "expected"},
        expected=tuple(record["expected"]) if record["expected"] is not None else None,
        metadata={k: v for k, v in record.items() if k not in ROLES},
    )


@BOTH
def test_short_answers_become_items_field_by_field(suffix: str) -> None:
    """Sample id, the log's model, the input, the scorer's answer, the target, the task."""
    records = records_of(QA_A.with_suffix(suffix))
    model, task = "scripted/scripted-a", "capitals_qa"
    assert [roles(r) for r in records] == [
        ("q1", model, QUESTIONS[0], "Paris", EXPECTED[0], task),
        ("q2", model, QUESTIONS[1], "eight", EXPECTED[1], task),
        ("q3", model, QUESTIONS[2], "Christopher Marlowe", EXPECTED[2], task),
        ("q4", model, QUESTIONS[3], "Au", EXPECTED[3], task),
    ]
    first = records[0]
    assert first["completion"] == "The capital of France is Paris.\nANSWER: Paris"
    assert first["answer"] == "Paris"
    assert first["scorer"] == "pattern"
    assert [r["score"] for r in records] == ["C", "C", "I", "C"]
    assert [r["subject"] for r in records] == ["geography", "biology", "literature", "chemistry"]
    assert first["task"] == "capitals_qa"
    assert first["epoch"] == 1
    assert first["target"] == ["Paris"]
    assert "error" not in first


def test_eval_and_json_logs_give_the_same_items() -> None:
    """The two formats of one run hold the same samples, read alike."""
    timing = ("total_time", "working_time")  # the two formats come from two runs
    for log in (QA_A, QA_B, MC_A):
        eval_log, json_log = (
            records_of(log.with_suffix(".eval")),
            records_of(log.with_suffix(".json")),
        )
        drop = [{k: v for k, v in r.items() if k not in timing} for r in eval_log]
        assert drop == [{k: v for k, v in r.items() if k not in timing} for r in json_log]


@BOTH
def test_errors_and_missing_answers(suffix: str) -> None:
    """A sample that ended in an error is a failed request; pattern() finding nothing is ''."""
    records = records_of(QA_B.with_suffix(suffix))
    model, task = "scripted/scripted-b", "capitals_qa"
    assert [roles(r) for r in records] == [
        ("q1", model, QUESTIONS[0], "paris", EXPECTED[0], task),
        ("q2", model, QUESTIONS[1], "", EXPECTED[1], task),
        ("q3", model, QUESTIONS[2], "Shakespeare", EXPECTED[2], task),
        ("q4", model, QUESTIONS[3], None, EXPECTED[3], task),
    ]
    assert records[1]["answer"] is None  # pattern() found no "ANSWER:" line
    assert records[1]["no_answer"] == (
        "inspect's pattern() found no answer in the completion (invalid_response_format)"
    )
    assert records[1]["completion"] == "I think it is six."
    assert records[3]["sample_error"] == "RuntimeError('scripted failure on q4')"
    assert "error" not in records[3]  # a failed request, not an unreadable sample
    assert records[3]["score"] is None
    assert [r["score"] for r in records[:3]] == ["C", "I", "C"]


@BOTH
def test_output_completion_keeps_the_text_as_written(suffix: str) -> None:
    """output="completion" gives the completion; the scorer's answer stays in metadata."""
    records = records_of(QA_A.with_suffix(suffix), output="completion")
    assert records[0]["output"] == "The capital of France is Paris.\nANSWER: Paris"
    assert records[0]["answer"] == "Paris"
    failed = records_of(QA_B.with_suffix(suffix), output="completion")[3]
    assert failed["output"] is None  # still a failed request


@BOTH
def test_multiple_choice_compares_letters_as_choice_does(suffix: str) -> None:
    """choice() grades letters: output and expected are the letters; the texts are metadata."""
    records = records_of(MC_A.with_suffix(suffix))
    model, task = "scripted/scripted-a", "science_mc"
    assert [roles(r) for r in records] == [
        ("m1", model, "Which planet is largest?", "B", ["B"], task),
        ("m2", model, "Which gas do plants take in?", "A", ["C"], task),
        ("m3", model, "What is 7 x 6?", "A", ["A"], task),
    ]
    assert [(r["answer"], r["target"]) for r in records] == [("B", "B"), ("A", "C"), ("A", "A")]
    assert records[2]["completion"] == "Let me think.\n\nANSWER: A"
    assert records[0]["choices"] == ["Mars", "Jupiter", "Venus", "Mercury"]


def test_exact_match_agrees_with_inspects_own_scores() -> None:
    """itemscore's exact_match is ok exactly where inspect's scorer said C."""
    for log in (QA_A, QA_B, MC_A):
        records = records_of(log.with_suffix(".eval"))
        result = itemscore.score([to_item(r) for r in records], ["exact_match"], suite_id="i")
        for record, item in zip(records, result.items):
            status = item.scores["exact_match"].status
            if record["score"] is None:
                assert status in ("fail", "skip")  # the failed request
            else:
                assert (status == "ok") == (record["score"] == "C"), record["id"]


def test_scorer_can_be_named() -> None:
    """scorer= picks a scorer by name; an unknown one is a ConfigError with did-you-mean."""
    assert records_of(MC_A.with_suffix(".json"), scorer="choice")[0]["output"] == "B"
    with pytest.raises(ConfigError, match=r"no scorer 'choices'.*'choice'.*Did you mean"):
        records_of(MC_A.with_suffix(".json"), scorer="choices")


def test_unknown_output_option() -> None:
    """output= takes answer or completion."""
    with pytest.raises(ConfigError, match=r"`output` \('text'\) must be one of"):
        records_of(QA_A.with_suffix(".json"), output="text")  # type: ignore[arg-type]


# -- the .eval archive ---------------------------------------------------------------------


def test_eval_members_are_zstd_compressed() -> None:
    """The trap is real: inspect_ai writes zip members with method 93 (zstd)."""
    with zipfile.ZipFile(QA_A.with_suffix(".eval")) as archive:
        methods = {info.compress_type for info in archive.infolist()}
        assert methods == {93}
        # Python < 3.14, unless a package patched zipfile (inspect_ai's zipfile-zstd does)
        if not hasattr(zipfile, "ZIP_ZSTANDARD"):
            with pytest.raises(NotImplementedError):
                archive.read("header.json")


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="zipfile reads zstd itself")
def test_missing_zstandard_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without zstandard, reading a .eval log says what to install."""
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(ConfigError, match=r"pip install 'zstandard>=0\.22'"):
        records_of(QA_A.with_suffix(".eval"))
    assert records_of(QA_A.with_suffix(".json"))[0]["output"] == "Paris"  # JSON needs none


def test_damaged_member_is_an_input_error(tmp_path: Path) -> None:
    """A member whose compressed bytes are damaged is named."""
    data = bytearray(QA_A.with_suffix(".eval").read_bytes())
    with zipfile.ZipFile(QA_A.with_suffix(".eval")) as archive:
        info = archive.getinfo("samples/q1_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 10 : start + 40] = bytes(30)
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(data))
    records = records_of(path)
    assert re.match(
        rf"^{re.escape(str(path))}: task 'capitals_qa': member samples/q1_epoch_1\.json "
        r"(cannot be read|is damaged)",
        records[0]["error"],
    ), records[0]["error"]
    assert [r["id"] for r in records] == ["member samples/q1_epoch_1.json", "q2", "q3", "q4"]
    assert all("error" not in r for r in records[1:])


def test_archive_without_header_is_not_a_log(tmp_path: Path) -> None:
    """A zip file that is not an inspect_ai log says so."""
    path = tmp_path / "other.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(InputError, match=r"no header\.json"):
        records_of(path)


# -- malformed JSON logs -------------------------------------------------------------------


def test_bad_json_names_line_and_column(tmp_path: Path) -> None:
    """A truncated JSON log is an InputError at FILE:LINE:COLUMN naming the value cut."""
    path = tmp_path / "log.json"
    path.write_text(QA_A.with_suffix(".json").read_text()[:500])
    with pytest.raises(InputError, match=rf"^{path}:\d+:\d+: not valid JSON of 'eval'"):
        records_of(path)


def test_a_json_list_is_not_a_log(tmp_path: Path) -> None:
    """A JSON data file (a list of rows) is refused with what a log looks like."""
    path = tmp_path / "rows.json"
    path.write_text('[{"id": 1}]')
    with pytest.raises(InputError, match="holds one object"):
        records_of(path)


def test_log_without_samples_says_how_to_get_them(tmp_path: Path) -> None:
    """A log written without samples is an error naming --no-log-samples."""
    log = json.loads(QA_A.with_suffix(".json").read_text())
    del log["samples"]
    path = tmp_path / "header-only.json"
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"no samples.*--no-log-samples"):
        records_of(path)


def test_object_without_eval_is_not_a_log(tmp_path: Path) -> None:
    """An object that is not an inspect_ai log is named as such."""
    path = tmp_path / "x.json"
    path.write_text('{"samples": []}')
    with pytest.raises(InputError, match="no 'eval' object"):
        records_of(path)


def test_bad_sample_is_that_items_error(tmp_path: Path) -> None:
    """A sample with a target of the wrong type is an error record naming file, task, sample."""
    log = json.loads(QA_A.with_suffix(".json").read_text())
    log["samples"][1]["target"] = {"text": "eight"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    records = records_of(path)
    assert records[1]["id"] == "q2"
    assert records[1]["error"].startswith(
        f"{path}: task 'capitals_qa': sample 2 (id 'q2'): 'target' must be"
    )
    assert [r["output"] for r in records] == ["Paris", None, "Christopher Marlowe", "Au"]


def test_several_epochs_are_attempts_of_one_id(tmp_path: Path) -> None:
    """With epochs, each sample keeps its id and its epoch is the attempt."""
    log = json.loads(QA_A.with_suffix(".json").read_text())
    second = [dict(s, epoch=2) for s in log["samples"]]
    log["samples"] += second
    log["eval"]["config"]["epochs"] = 2
    path = tmp_path / "epochs.json"
    path.write_text(json.dumps(log))
    records = records_of(path)
    assert [r["id"] for r in records] == ["q1", "q2", "q3", "q4"] * 2
    assert [r["attempt"] for r in records] == [1] * 4 + [2] * 4


def test_the_fixtures_are_the_runs_recorded_in_the_readme() -> None:
    """Each fixture names inspect_ai's version in its own header, as the README says."""
    readme = (LOGS.parent / "README.md").read_text()
    for log in sorted(LOGS.glob("*.json")):
        version = json.loads(log.read_text())["eval"]["packages"]["inspect_ai"]
        assert f"| inspect_ai | {version}" in readme


# -- through read_items and the command line -----------------------------------------------


@BOTH
def test_read_items_with_format_inspect(suffix: str) -> None:
    """read_items(format="inspect") gives items; a failed sample has no output."""
    items = itemscore.read_items(QA_B.with_suffix(suffix), format="inspect")
    assert [(i.id, i.model, i.output, i.expected, i.group) for i in items] == [
        ("q1", "scripted/scripted-b", "paris", ("Paris",), "capitals_qa"),
        ("q2", "scripted/scripted-b", "", ("8", "eight"), "capitals_qa"),
        ("q3", "scripted/scripted-b", "Shakespeare", tuple(EXPECTED[2]), "capitals_qa"),
        ("q4", "scripted/scripted-b", None, ("Au",), "capitals_qa"),
    ]
    assert items[0].metadata["subject"] == "geography"
    assert items[3].metadata["sample_error"] == "RuntimeError('scripted failure on q4')"


def test_eval_extension_means_inspect() -> None:
    """A .eval file needs no --format: the extension is inspect_ai's own."""
    items = itemscore.read_items(QA_A.with_suffix(".eval"))
    assert [i.output for i in items] == ["Paris", "eight", "Christopher Marlowe", "Au"]


def test_map_group_to_a_sample_metadata_key() -> None:
    """columns={"group": "subject"} groups by the samples' metadata instead of the task."""
    items = itemscore.read_items(
        MC_A.with_suffix(".json"), format="inspect", columns={"group": "subject"}
    )
    assert [i.group for i in items] == ["astronomy", "biology", "arithmetic"]


def test_command_line_scores_an_inspect_log() -> None:
    """`itemscore score LOG.eval --format inspect` agrees with inspect's own accuracy."""
    from click.testing import CliRunner

    from itemscore.cli import cli

    log = MC_A.with_suffix(".eval")
    args = ["score", str(log), "--format", "inspect", "-m", "exact_match", "--json"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (measurement,) = json.loads(result.output)["measurements"]
    assert measurement["model"] == "scripted/scripted-a"
    accuracy = json.loads(MC_A.with_suffix(".json").read_text())["results"]["scores"][0]
    assert measurement["value"] == pytest.approx(accuracy["metrics"]["accuracy"]["value"])


HOSTILE = st.one_of(
    st.text(),
    st.sampled_from(["\ud800", "[bold red]x[/]", "=cmd()", "\x00\x85\u2028", "A, Z", "B"]),
)


@settings(max_examples=60, deadline=None)
@given(strings=st.lists(HOSTILE, min_size=3, max_size=3))
def test_hostile_text_is_read_as_it_is_or_named(strings: list[str]) -> None:
    """Any text in a real sample's answer, target and id: read as it is, or an InputError."""
    answer, target, ident = strings
    log = json.loads(MC_A.with_suffix(".json").read_text())
    sample = log["samples"][0]
    sample["scores"]["choice"]["answer"] = answer
    sample["target"] = target
    sample["id"] = ident
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.json"
        path.write_text(json.dumps(log), encoding="utf-8")
        records = records_of(path)
    if "error" in records[0]:
        message = records[0]["error"]
        assert message.startswith(f"{path}: task 'science_mc': sample 1"), message
        assert "\ud800" in "".join(strings), message  # only a lone surrogate is refused
        assert "\ud800" not in json.dumps(records[0], ensure_ascii=False)
        return
    assert records[0]["id"] == ident
    assert records[0]["answer"] == answer
    assert isinstance(records[0]["output"], str)


def test_a_json_log_is_recognised_without_format(tmp_path: Path) -> None:
    """A .json file holding an inspect_ai log needs no --format; a JSON list stays json."""
    from itemscore.inputs import detect_format

    assert detect_format(QA_A.with_suffix(".json")) == "inspect"
    assert detect_format(QA_A.with_suffix(".eval")) == "inspect"
    data = tmp_path / "rows.json"
    data.write_text('[{"version": 2, "eval": {}}]')
    assert detect_format(data) == "json"
    other = tmp_path / "other.json"
    other.write_text('{"eval": {}}')
    assert detect_format(other) == "json"  # no inspect version first: not claimed


def _log() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(MC_A.with_suffix(".json").read_text())
    return loaded


def _sample(**changes: Any) -> Any:
    def change(log: dict[str, Any]) -> None:
        log["samples"][0].update(changes)

    return change


def _samples(value: Any) -> Any:
    def change(log: dict[str, Any]) -> None:
        log["samples"] = value

    return change


def test_samples_that_are_not_a_list_are_refused(tmp_path: Path) -> None:
    """'samples' holding an object is not an inspect_ai log: the file is refused."""
    log = _log()
    log["samples"] = {"a": 1}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    with pytest.raises(InputError, match=rf"^{path}: 'samples' must be a list"):
        records_of(path)


MALFORMED = [
    ("sample-number", _samples([5]), r"sample 1 \(id None\): the sample is not a JSON object"),
    ("choices-text", _sample(choices="ABC"), r"sample 1 \(id 'm1'\): 'choices' must be a list"),
    ("output-text", _sample(output="B"), r"sample 1 \(id 'm1'\): 'output' must be an object"),
    ("completion-number", _sample(output={"completion": 5}), r"'output.completion' must be"),
    ("id-null", _sample(id=None), r"the sample's id must be a text or a whole number"),
]


@pytest.mark.parametrize(
    ("change", "message"), [(c, m) for _, c, m in MALFORMED], ids=[i for i, _, _ in MALFORMED]
)
def test_malformed_samples_are_named(tmp_path: Path, change: Any, message: str) -> None:
    """A real log with one sample broken: that sample's error names file, task and sample."""
    log = _log()
    change(log)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    records = records_of(path)
    assert re.match(
        rf"^{re.escape(str(path))}: task 'science_mc': .*{message}", records[0]["error"]
    )
    assert records[0]["output"] is None


def test_chat_input_gives_the_user_messages_text(tmp_path: Path) -> None:
    """A sample whose input is a chat: the text of its user messages, system prompt left out."""
    log = _log()
    log["samples"][0]["input"] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Which planet is largest?"}]},
        {"role": "assistant", "content": "Jupiter?"},
        {"role": "user", "content": "Say it again."},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(log))
    assert records_of(path)[0]["input"] == "Which planet is largest?\n\nSay it again."


def _repack(
    source: Path, target: Path, drop: str = "", replace: dict[str, bytes] | None = None
) -> None:
    """Rewrite a real .eval log with deflate members, dropping or replacing some."""
    from itemscore.inputs._zip_member import read_member

    bounds = {"max_bytes": 1 << 30, "max_ratio": 1 << 20, "ratio_floor": 0}
    with zipfile.ZipFile(source) as archive, source.open("rb") as raw:
        members = {
            i.filename: read_member(archive, raw, i, str(source), **bounds)
            for i in archive.infolist()
        }
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            if name != drop:
                out.writestr(name, (replace or {}).get(name, data))


def test_deflate_members_are_read_too(tmp_path: Path) -> None:
    """An archive whose members use zipfile's own methods reads the same."""
    path = tmp_path / "deflate.eval"
    _repack(MC_A.with_suffix(".eval"), path)
    assert records_of(path) == records_of(MC_A.with_suffix(".eval"))


def test_unfinished_run_is_read_from_its_journal(tmp_path: Path) -> None:
    """A .eval log without header.json (a run still going) is read from _journal/start.json."""
    path = tmp_path / "running.eval"
    _repack(MC_A.with_suffix(".eval"), path, drop="header.json")
    assert [r["output"] for r in records_of(path)] == ["B", "A", "A"]


@pytest.mark.parametrize(
    ("member", "data", "message"),
    [
        (
            "samples/m2_epoch_1.json",
            b"[]",
            r"member samples/m2_epoch_1\.json: the sample is not a JSON object",
        ),
        (
            "samples/m2_epoch_1.json",
            b"{",
            r"'science_mc': member samples/m2_epoch_1\.json:1:2: not valid JSON",
        ),
    ],
    ids=["sample-list", "sample-broken"],
)
def test_bad_sample_members_are_that_items_error(
    tmp_path: Path, member: str, data: bytes, message: str
) -> None:
    """A sample member that is not what inspect_ai writes is its item's error, named."""
    path = tmp_path / "bad.eval"
    _repack(MC_A.with_suffix(".eval"), path, replace={member: data})
    records = records_of(path)
    at = f"{path}: task 'science_mc': member {member}"
    assert records[1]["error"].startswith(at), records[1]["error"]
    assert re.search(message, records[1]["error"])
    assert [r["output"] for r in records] == ["B", None, "A"]


def test_a_header_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    """header.json holding a list is not an inspect_ai log: the file is refused."""
    path = tmp_path / "bad.eval"
    _repack(MC_A.with_suffix(".eval"), path, replace={"header.json": b"[]"})
    with pytest.raises(InputError, match=rf"^{path}: member header.json must hold a JSON object"):
        records_of(path)


def test_deep_nesting_is_an_input_error(tmp_path: Path) -> None:
    """A JSON log nested too deeply for the parser is named, not a crash."""
    path = tmp_path / "deep.json"
    path.write_text('{"a": ' + "[" * 100_000)
    with pytest.raises(InputError, match=r"deep.json"):
        records_of(path)


# -- the cases inspect scores its own way (logs in inspect-cases/) ---------------------------

CASES = LOGS.parent / "inspect-cases"


def _header_accuracy(path: Path, scorer: str) -> float:
    from itemscore.inputs._zip_member import read_member

    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        info = archive.getinfo("header.json")
        header = json.loads(read_member(archive, raw, info, str(path), **BOUNDS))
    (found,) = [s for s in header["results"]["scores"] if s["name"] == scorer]
    value: float = found["metrics"]["accuracy"]["value"]
    return value


BOUNDS = {"max_bytes": 1 << 30, "max_ratio": 1 << 20, "ratio_floor": 0}


def test_several_right_letters_stay_one_required_answer() -> None:
    """multiple_correct targets ['A', 'C'] are one answer, all letters required, as choice()."""
    records = records_of(CASES / "letters_mc_scripted-a.eval")
    assert [(r["id"], r["output"], r["expected"]) for r in records] == [
        ("x1", "A, C", ["A, C"]),
        ("x2", "A", ["A, C"]),  # one right letter of two is wrong
        ("x3", "B, D", ["B, D"]),
        ("x4", "A", ["B"]),
        ("x5", "", ["A, C"]),
    ]
    assert records[0]["target"] == ["A", "C"]
    assert records[0]["choices"] == ["Lemon", "Apple", "Lime", "Pear"]


def test_choices_that_differ_in_case_are_told_apart_by_letter() -> None:
    """Picking 'may' where 'May' is right is wrong, as inspect says, though the texts match."""
    (x4,) = [r for r in records_of(CASES / "letters_mc_scripted-a.eval") if r["id"] == "x4"]
    assert x4["choices"][:2] == ["may", "May"]
    assert (x4["output"], x4["expected"], x4["score"]) == ("A", ["B"], "I")


def test_exact_match_gives_inspects_accuracy_on_letters() -> None:
    """exact_match over letters gives choice()'s own accuracy from the log's header (0.4)."""
    path = CASES / "letters_mc_scripted-a.eval"
    result = itemscore.score(itemscore.read_items(path), ["exact_match"], suite_id="mc")
    value = result.measurements["mc.exact_match"].value
    assert value == pytest.approx(_header_accuracy(path, "choice"))
    assert value == pytest.approx(0.4)


def test_a_choice_with_no_letter_is_a_fail_with_its_reason() -> None:
    """choice() found no 'ANSWER: X' line: the output is '' and no_answer says why."""
    (x5,) = [r for r in records_of(CASES / "letters_mc_scripted-a.eval") if r["id"] == "x5"]
    assert x5["output"] == ""
    assert x5["no_answer"] == (
        "inspect's choice() found no answer in the completion (invalid_response_format)"
    )
    assert x5["completion"] == "I am not sure."


def test_includes_and_match_score_the_completion() -> None:
    """Their 'answer' is only a case-folded or stripped copy: the completion is the output."""
    for scorer in ("includes", "match"):
        records = records_of(CASES / "contains_qa_scripted-a.eval", scorer=scorer)
        assert records[0]["output"] == "I am fairly sure it is Rome."
        assert records[0]["answer"] in ("i am fairly sure it is rome.", records[0]["output"])


def test_epochs_are_attempts() -> None:
    """Two epochs: each sample twice, with its epoch as the attempt."""
    records = records_of(CASES / "contains_qa_scripted-a.eval")
    assert [(r["id"].partition("#")[0], r["attempt"]) for r in records] == [
        ("c1", 1), ("c2", 1), ("c3", 1), ("c4", 1), ("c1", 2), ("c2", 2), ("c3", 2), ("c4", 2),
    ]  # fmt: skip
    assert [r["output"] for r in records][4:6] == ["Rome", "42"]
    items = itemscore.read_items(CASES / "contains_qa_scripted-a.eval")
    assert len({(i.id, i.metadata.get("attempt", getattr(i, "attempt", None))) for i in items}) == 8


def test_sample_metadata_named_like_a_role_is_kept() -> None:
    """Sample metadata keys 'group' and 'model' are kept as sample.group, sample.model."""
    (item, *_) = itemscore.read_items(CASES / "contains_qa_scripted-a.eval")
    assert (item.group, item.model) == ("contains_qa", "scripted/scripted-a")
    assert item.metadata["sample.group"] == "g0"
    assert item.metadata["sample.model"] == "from-metadata"
    assert item.metadata["n"] == 0
    by_subject = itemscore.read_items(
        CASES / "contains_qa_scripted-a.eval", columns={"group": "sample.group"}
    )
    assert [i.group for i in by_subject][:2] == ["g0", "g1"]


def test_token_usage_is_kept_per_sample() -> None:
    """model_usage becomes input_tokens, output_tokens, total_tokens (summed over models)."""
    path = CASES / "limited_qa_scripted-a.eval"
    records = records_of(path)
    assert [(r["input_tokens"], r["output_tokens"], r["total_tokens"]) for r in records] == [
        (2, 3, 5),
        (5, 191, 196),
    ]
    assert "cost" not in records[0]  # mockllm logs no cost


def test_a_sample_that_hit_its_token_limit_says_so() -> None:
    """sample.limit is kept; its empty answer is a fail whose reason names the limit."""
    records = records_of(CASES / "limited_qa_scripted-a.eval")
    assert "limit" not in records[0]
    limited = records[1]
    assert limited["limit"]["type"] == "token"
    assert limited["limit"]["limit"] == 60
    assert limited["output"] == ""
    assert limited["no_answer"] == "the sample hit its token limit of 60"


def test_rules_harness_refuses_the_completion_of_an_extracting_scorer() -> None:
    """pattern() compared its answer: rules=harness with output=completion would mislead."""
    with pytest.raises(ConfigError, match=r"rules='harness' compares what inspect's pattern"):
        records_of(QA_A.with_suffix(".eval"), rules="harness", output="completion")


# -- bounds -----------------------------------------------------------------------------------


def _bomb(path: Path, size: int, declared: int | None = None, method: str = "zstd") -> None:
    """A .eval archive whose one sample member expands to about ``size`` bytes of JSON.

    The member is compressed piece by piece, so the test itself never holds ``size`` bytes.
    """
    import zlib

    import zstandard

    header = json.loads(read_member_of(QA_A.with_suffix(".eval"), "header.json").decode())
    head, tail = b'{"id": "q1", "epoch": 1, "input": "x", "target": "', b'"}'
    if method == "deflate":
        with zipfile.ZipFile(path, "w") as out:
            out.writestr("header.json", json.dumps(header))
            body = head + b"a" * size + tail
            out.writestr("samples/q1_epoch_1.json", body, compress_type=zipfile.ZIP_DEFLATED)
        return
    compressor = zstandard.ZstdCompressor(level=1).compressobj()
    crc = zlib.crc32(head)
    parts = [compressor.compress(head)]
    piece = b"a" * (16 << 20)
    left = size
    while left > 0:
        chunk = piece[: min(left, len(piece))]
        crc = zlib.crc32(chunk, crc)
        parts.append(compressor.compress(chunk))
        left -= len(chunk)
    crc = zlib.crc32(tail, crc)
    parts += [compressor.compress(tail), compressor.flush()]
    total = len(head) + size + len(tail)
    path.write_bytes(
        zip_with_member(header, b"".join(parts), total if declared is None else declared, crc)
    )


def read_member_of(path: Path, member: str) -> bytes:
    from itemscore.inputs._zip_member import read_member

    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        return read_member(archive, raw, archive.getinfo(member), str(path), **BOUNDS)


def zip_with_member(header: dict[str, Any], compressed: bytes, declared: int, crc: int) -> bytes:
    """A zip of header.json (stored) and one zstd member, written by hand (APPNOTE 4.3)."""
    import struct
    import zlib

    entries = [
        (b"header.json", json.dumps(header).encode(), 0, None, None),
        (b"samples/q1_epoch_1.json", compressed, 93, declared, crc),
    ]
    out = bytearray()
    central = bytearray()
    for name, data, method, size, crc in entries:
        offset = len(out)
        real_crc = zlib.crc32(data) if crc is None else crc
        real_size = len(data) if size is None else size
        local = struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 63, 0, method, 0, 0, real_crc, len(data), real_size,
            len(name), 0,
        )  # fmt: skip
        out += local + name + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 63, 63, 0, method, 0, 0, real_crc, len(data),
            real_size, len(name), 0, 0, 0, 0, 0, offset,
        ) + name  # fmt: skip
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(out), 0
    )
    return bytes(out + central + end)


BOMB_SCRIPT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (__LIMIT__, __LIMIT__))
import itemscore
try:
    itemscore.read_items(sys.argv[1], format="inspect", **__OPTIONS__)
except itemscore.InputError as exc:
    print("InputError:", exc)
    sys.exit(2)
except MemoryError:
    print("MemoryError")
    sys.exit(3)
print("read")
"""


def _run_bounded(path: Path, options: dict[str, Any], limit: int) -> Any:
    import subprocess

    script = BOMB_SCRIPT.replace("__LIMIT__", str(limit)).replace("__OPTIONS__", repr(options))
    return subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_a_zstd_bomb_stops_at_the_bound_under_a_memory_limit(tmp_path: Path) -> None:
    """A 2 GiB member (a few KB compressed) in 1 GiB of address space: exit 2, not a crash."""
    path = tmp_path / "bomb.eval"
    _bomb(path, 2 << 30)
    assert path.stat().st_size < 1 << 20
    done = _run_bounded(path, {}, 1 << 30)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{path}: task 'capitals_qa': member samples/q1_epoch_1.json declares" in done.stdout
    assert "max_sample_bytes" in done.stdout


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_a_bomb_that_lies_about_its_size_stops_at_the_declared_size(tmp_path: Path) -> None:
    """Declared 100 bytes, 2 GiB inside: reading stops one piece past the declared size."""
    path = tmp_path / "liar.eval"
    _bomb(path, 2 << 30, declared=100)
    done = _run_bounded(path, {}, 1 << 30)
    assert done.returncode == 0, done.stdout + done.stderr  # that one sample is an error item
    assert "read" in done.stdout
    records = records_of(path)
    assert "expands past the 100 bytes it declares" in records[0]["error"]


def test_a_low_bound_refuses_a_small_bomb_by_size_and_by_ratio(tmp_path: Path) -> None:
    """max_sample_bytes and max_ratio are reader options; both name the option to raise."""
    path = tmp_path / "small.eval"
    _bomb(path, 4 << 20)  # 4 MiB of one letter: thousands of times its compressed size
    with pytest.raises(InputError, match=r"declares \d+ bytes, more than the bound of 1000000"):
        records_of(path, max_sample_bytes="1000000")
    with pytest.raises(InputError, match=r"more than 1000 times its compressed size"):
        records_of(path)
    assert len(records_of(path, max_ratio=10**6)[0]["target"]) == 4 << 20


def test_deflate_members_are_bounded_too(tmp_path: Path) -> None:
    """A deflate member past the bound is refused before it is decompressed."""
    path = tmp_path / "deflate-bomb.eval"
    _bomb(path, 4 << 20, method="deflate")
    with pytest.raises(InputError, match=r"times its compressed size.*max_ratio"):
        records_of(path)
    with pytest.raises(InputError, match=r"bound of 1024 bytes per sample"):
        records_of(path, max_sample_bytes=1024, max_ratio=10**6)


def test_a_bad_bound_is_a_config_error() -> None:
    """A bound that is not a whole number of at least 1 names the option and its default."""
    with pytest.raises(ConfigError, match=r"`max_sample_bytes` \('many'\) must be a whole"):
        records_of(QA_A.with_suffix(".eval"), max_sample_bytes="many")
    with pytest.raises(ConfigError, match=r"`max_ratio` \(0\) must be a whole number"):
        records_of(QA_A.with_suffix(".eval"), max_ratio=0)


def test_a_json_sample_past_the_bound_is_refused(tmp_path: Path) -> None:
    """In a .json log, one sample longer than max_sample_bytes is named, not read whole."""
    log = json.loads(QA_A.with_suffix(".json").read_text())
    log["samples"][2]["target"] = "x" * 300_000
    path = tmp_path / "long.json"
    path.write_text(json.dumps(log))
    with pytest.raises(
        InputError,
        match=rf"^{path}: task 'capitals_qa': .*samples element 3 is longer than the bound",
    ):
        records_of(path, max_sample_bytes=200_000)
    assert len(records_of(path)[2]["target"]) == 300_000


def test_samples_before_the_header_are_read_after_it(tmp_path: Path) -> None:
    """A JSON log whose samples come before 'eval' (not inspect's order) reads the same."""
    log = json.loads(QA_A.with_suffix(".json").read_text())
    reordered = {"samples": log.pop("samples"), **log}
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(reordered))
    assert records_of(path) == records_of(QA_A.with_suffix(".json"))


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_a_large_json_log_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """40 MB of samples in one JSON log: reading them grows the peak by far less than that."""
    import subprocess

    log = json.loads(QA_A.with_suffix(".json").read_text())
    sample = log["samples"][0]
    log["samples"] = [sample | {"id": f"s{n}", "target": "x" * 4000} for n in range(10_000)]
    path = tmp_path / "large.json"
    path.write_text(json.dumps(log))
    del log
    script = (
        "import resource, sys\n"
        "from itemscore.inputs.inspect_log import read_inspect\n"
        "records = read_inspect(sys.argv[1])\n"
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
    assert count == 10_000
    assert path.stat().st_size > 40_000_000
    assert grown_kib < 20_000  # json.load of the whole log grows it by about 400 MB
