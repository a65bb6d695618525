"""Names from harness logs reach messages escaped (issue 16, item 19).

lm-eval keys and inspect ``.eval`` member and scorer names come from the file; a terminal
would act on the controls they may hold (OSC 52 writes the clipboard in some terminals, CSI
``ESC[2J`` clears the screen, U+202E reverses the text after it). The readers show them as
the JSON lines and CSV readers show keys: with ``escape_name``, the controls as escapes.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from itemscore import ConfigError, InputError
from itemscore.inputs import read_items
from itemscore.inputs._zip_member import read_member
from itemscore.inputs.inspect_log import read_inspect

HARNESS = Path(__file__).parent / "data" / "harness"
MC_EVAL = HARNESS / "inspect" / "science_mc_scripted-a.eval"
LM_SAMPLES = next((HARNESS / "lm-eval" / "results" / "scripted-a").glob("samples_capitals*"))

OSC = "\x1b]52;c;aGk=\x07"  # OSC 52, ended by BEL
CSI = "\x1b[2J"
BIDI = "\u202e"
HOSTILE = f"{OSC}{CSI}{BIDI}x"
# The name as escape_name shows it: every control as its Python escape, nothing else changed.
SHOWN = r"\x1b]52;c;aGk=\x07\x1b[2J\u202ex"


def _assert_escaped(message: str) -> None:
    for raw in ("\x1b", "\x07", BIDI):
        assert raw not in message, message
    assert SHOWN in message, message


def _members(source: Path) -> dict[str, bytes]:
    bounds = {"max_bytes": 1 << 30, "max_ratio": 1 << 20, "ratio_floor": 0}
    with zipfile.ZipFile(source) as archive, source.open("rb") as raw:
        return {
            info.filename: read_member(archive, raw, info, str(source), **bounds)
            for info in archive.infolist()
        }


def _write(target: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)


def _with_sample(tmp_path: Path, data: bytes) -> tuple[Path, str]:
    """The real log with one more sample member, named with controls, holding ``data``."""
    members = _members(MC_EVAL)
    member = f"samples/{HOSTILE}_epoch_1.json"
    members[member] = data
    path = tmp_path / "hostile.eval"
    _write(path, members)
    assert member in zipfile.ZipFile(path).namelist()  # the name is stored as it is
    return path, member


def test_an_eval_member_past_the_bound_is_named_escaped(tmp_path: Path) -> None:
    sample = json.loads(_members(MC_EVAL)["samples/m1_epoch_1.json"])
    sample["metadata"] = {"pad": "a" * 20_000}
    path, _ = _with_sample(tmp_path, json.dumps(sample).encode())
    with pytest.raises(InputError) as caught:
        list(read_inspect(path, max_sample_bytes=10_000))
    message = str(caught.value)
    assert "more than the bound of 10000 bytes per sample" in message
    _assert_escaped(message)


def test_an_unreadable_eval_member_is_named_escaped_in_its_error(tmp_path: Path) -> None:
    path, _ = _with_sample(tmp_path, b"{")
    errors = [r["error"] for r in read_inspect(path) if r.get("error")]
    assert len(errors) == 1
    assert "not valid JSON" in errors[0]
    _assert_escaped(errors[0])


def test_an_inspect_scorer_name_is_escaped(tmp_path: Path) -> None:
    """A scorer named with controls, listed when another scorer is asked for."""
    members = _members(MC_EVAL)
    header = json.loads(members["header.json"])
    header["eval"]["scorers"] = [{"name": f"{HOSTILE}/choice", "options": {}}]
    members["header.json"] = json.dumps(header).encode()
    path = tmp_path / "scorer.eval"
    _write(path, members)
    with pytest.raises(ConfigError) as caught:
        list(read_inspect(path, scorer="missing"))
    _assert_escaped(str(caught.value))


def test_lm_eval_keys_are_escaped_as_jsonl_keys_are(tmp_path: Path) -> None:
    """A samples line without 'doc_id': its keys are listed as the JSON lines reader lists them."""
    row = json.loads(LM_SAMPLES.read_text(encoding="utf-8").splitlines()[0])
    row = {(HOSTILE if key == "doc_id" else key): value for key, value in row.items()}
    path = tmp_path / "samples_capitals_gen_2026-11-30T23-40-36.903617.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_items(path, format="lm-eval")
    message = str(caught.value)
    assert "the line has no 'doc_id'" in message
    _assert_escaped(message)
