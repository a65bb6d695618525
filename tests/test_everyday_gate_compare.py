"""Everyday use of gate, compare and verify: runs of several models, labels, margins, data."""

from __future__ import annotations

import hashlib
import html
import http.client
import json
import math
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from itemscore import ConfigError, ItemResult, RunResult, compare, score
from itemscore._compare_out import comparison_tex
from itemscore._gate import _rho, gate, pairs_needed
from itemscore.cli import cli
from itemscore.cli._compare_commands import run_labels

pytest_plugins = ["itemscore.pytest_plugin"]

ROOT = Path(__file__).parents[1]


def _write(path: Path, models: dict[str, float], n: int, seed: int) -> None:
    """``n`` questions per model, each right with the model's probability."""
    rng = np.random.default_rng(seed)
    lines = [
        json.dumps({"id": f"q{i}", "model": model, "output": "y" if ok else "n", "expected": "y"})
        for model, p in models.items()
        for i, ok in enumerate((rng.random(n) < p).tolist())
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def itemscore(*args: str | Path) -> tuple[int, str]:
    """``itemscore ARGS`` as a user types it: exit code and everything printed."""
    run = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "200"})
    return run.exit_code, run.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """v1 and v2 (two models each), one (989 questions, one model), m-a (v1's model-a alone)."""
    folder = tmp_path_factory.mktemp("everyday")
    _write(folder / "v1.jsonl", {"model-a": 0.6, "model-b": 0.7}, 200, 1)
    _write(folder / "v2.jsonl", {"model-a": 0.62, "model-b": 0.69}, 200, 2)
    _write(folder / "one.jsonl", {"model-x": 0.7}, 989, 3)
    for name in ("v1", "v2", "one"):
        code, output = itemscore(
            "score", folder / f"{name}.jsonl", "-m", "exact_match", "--out", folder / name
        )
        assert code == 0, output
    return folder


def _radius(t: int, alpha: float = 0.05) -> float:
    """Howard et al.'s two-sided normal-mixture boundary for differences in [-1, 1], by hand."""
    rho = _rho(1.0, alpha, 500)
    return math.sqrt((t + rho) * (2 * math.log(1 / alpha) + math.log((t + rho) / rho))) / t


# --------------------------------------------------------------------------- gate --model


def test_gate_on_runs_of_two_models_names_them_and_asks_for_model(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gate v1/results.json v2/results.json -m exact_match --margin 0.01`: exit 2, --model."""
    monkeypatch.chdir(runs)
    code, output = itemscore(
        "gate", "v1/results.json", "v2/results.json", "-m", "exact_match", "--margin", "0.01"
    )
    assert code == 2
    assert "'model-a', 'model-b'" in output
    assert "pick it with `--model NAME`, e.g. `--model model-a`" in output


def test_gate_model_picks_the_same_model_in_both_runs(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--model model-b gates exactly what runs holding only model-b's items give."""
    monkeypatch.chdir(runs)
    code, output = itemscore(
        "gate", "v1/results.json", "v2/results.json", "-m", "exact_match", "--margin", "0.25",
        "--model", "model-b", "--json",
    )  # fmt: skip
    data = json.loads(output)
    assert (
        code
        == data["exit_code"]
        == {"not worse": 0, "worse": 1, "inconclusive": 3}[data["verdict"]]
    )
    assert data["model"] == "model-b"
    # Reference: each run's model-b items scored into a run of their own, gated plainly.
    alone = []
    for name in ("v1", "v2"):
        rows = [
            line
            for line in (runs / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
            if json.loads(line)["model"] == "model-b"
        ]
        (runs / f"{name}-b.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        assert (
            itemscore("score", f"{name}-b.jsonl", "-m", "exact_match", "--out", f"{name}-b")[0] == 0
        )
        alone.append(RunResult.load_json(runs / f"{name}-b" / "results.json"))
    reference = gate(alone[0], alone[1], metric="exact_match", margin=0.25)
    assert (data["n_pairs"], data["gain"], data["low"], data["high"]) == (
        reference.n_pairs, reference.gain, reference.low, reference.high,
    )  # fmt: skip
    assert data["n_pairs"] == 200
    in_python = gate(
        RunResult.load_json(runs / "v1/results.json"),
        RunResult.load_json(runs / "v2/results.json"),
        metric="exact_match", margin=0.25, model="model-b",
    )  # fmt: skip
    assert in_python.gain == reference.gain


@pytest.mark.parametrize(
    ("candidate", "model", "said"),
    [
        ("v2", "model-c", "is no model of the baseline results; its models are 'model-a', "
         "'model-b'. Did you mean"),
        ("one", "model-a", "is no model of the candidate results, which hold only 'model-x'."),
    ],
    ids=["unknown", "not-in-the-one-model-run"],
)  # fmt: skip
def test_gate_model_that_a_run_does_not_hold_is_exit_2(
    runs: Path, monkeypatch: pytest.MonkeyPatch, candidate: str, model: str, said: str
) -> None:
    """A model missing from either run is bad input naming that run's models."""
    monkeypatch.chdir(runs)
    code, output = itemscore(
        "gate", "v1/results.json", f"{candidate}/results.json", "-m", "exact_match",
        "--margin", "0.1", "--model", model,
    )  # fmt: skip
    assert code == 2, output
    assert f"`--model` ('{model}') {said}" in output


def test_a_run_gated_against_itself_says_the_smallest_margin_it_can_decide(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """989 pairs, margin 0.01: inconclusive (3), the half-width 0.0974 and the pairs needed."""
    monkeypatch.chdir(runs)
    code, output = itemscore(
        "gate", "one/results.json", "one/results.json", "-m", "exact_match", "--margin", "0.01"
    )
    assert code == 3
    first, note = output.splitlines()
    assert first.startswith("inconclusive: exact_match gain 0.0000 [-0.0974, 0.0974] over 989")
    needed = pairs_needed(0.01, 1.0, 0.05)
    assert note == (
        "With these 989 pairs, a margin below 0.0974 cannot be shown: the interval's "
        "half-width is the smallest margin this data can decide. A margin of 0.01 needs about "
        f"{needed:,} pairs when the two score alike."
    )
    assert f"{_radius(989):.4f}" == "0.0974"
    # The pairs needed: the first count whose boundary is below the margin.
    assert _radius(needed) < 0.01 <= _radius(needed - 1)
    # Above the half-width the same pairs decide: not worse, and no note.
    code, output = itemscore(
        "gate", "one/results.json", "one/results.json", "-m", "exact_match", "--margin", "0.1"
    )
    assert code == 0
    assert len(output.splitlines()) == 1


def test_the_json_verdict_holds_the_half_width_and_the_pairs_needed(runs: Path) -> None:
    """--json: half_width is Howard's boundary at n; pairs_needed the count for the margin."""
    code, output = itemscore(
        "gate", runs / "one/results.json", runs / "one/results.json", "-m", "exact_match",
        "--margin", "0.05", "--json",
    )  # fmt: skip
    data = json.loads(output)
    assert code == 3
    assert data["half_width"] == pytest.approx(_radius(989), rel=1e-12)
    assert _radius(data["pairs_needed"]) < 0.05 <= _radius(data["pairs_needed"] - 1)
    assert data["model"] is None


def test_the_fixture_says_why_a_small_margin_cannot_pass_and_the_docs_margin_passes(
    runs: Path, itemscore_gate: object
) -> None:
    """margin=0.02 on ~1,000 items fails naming the margin they can decide; 0.12 passes."""
    check = itemscore_gate
    one = runs / "one/results.json"
    with pytest.raises(pytest.fail.Exception, match=r"a margin below 0\.0974 cannot be shown"):
        check(one, one, metric="exact_match", margin=0.02)  # type: ignore[operator]
    assert check(one, one, metric="exact_match", margin=0.12).verdict == "not worse"  # type: ignore[operator]
    two = runs / "v1/results.json", runs / "v2/results.json"
    result = check(*two, metric="exact_match", margin=0.3, model="model-a")  # type: ignore[operator]
    assert result.model == "model-a"


def test_the_docs_table_of_smallest_margins_is_the_boundary() -> None:
    """docs/comparing-models.md's table of pairs and smallest margins matches the formula."""
    text = (ROOT / "docs" / "comparing-models.md").read_text(encoding="utf-8")
    pairs_row = re.search(r"^\| pairs \|(.*)\|$", text, re.M)
    margins_row = re.search(r"^\| smallest margin \|(.*)\|$", text, re.M)
    assert pairs_row is not None
    assert margins_row is not None
    pairs = [int(x.strip().replace(",", "")) for x in pairs_row.group(1).split("|")]
    margins = [x.strip() for x in margins_row.group(1).split("|")]
    assert margins == [f"{_radius(t):.3f}" for t in pairs]
    # The pytest example's margin passes a candidate scoring alike on 1,000 items.
    assert "margin=0.12" in text
    assert _radius(1000) < 0.12


# --------------------------------------------------------------------------- compare labels

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None or shutil.which("kpsewhich") is None,
    reason="pdflatex (texlive-latex-base, texlive-latex-recommended) is not installed",
)


def test_two_runs_name_each_model_by_its_folder_and_say_which_file_is_which(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`itemscore compare v1/results.json v2/results.json`: model-a @ v1, and a Runs: line."""
    monkeypatch.chdir(runs)
    code, output = itemscore("compare", "v1/results.json", "v2/results.json")
    assert code == 0, output
    for model in ("model-a", "model-b"):
        assert re.search(rf"exact_match +{model} @ v1 +{model} @ v2 ", output), output
    assert "(a)" not in output
    assert "(b)" not in output
    assert output.splitlines()[-1] == (
        "Runs: v1 = v1/results.json (baseline), v2 = v2/results.json (candidate)."
    )


def test_label_names_the_runs_everywhere(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--label old,new: the JSON, comparison.json and the plot use the labels."""
    monkeypatch.chdir(runs)
    code, output = itemscore(
        "compare", "v1/results.json", "v2/results.json", "--label", "old,new", "--json"
    )
    assert code == 0, output
    pairs = {(c["baseline"], c["candidate"]) for c in json.loads(output)}
    assert pairs == {("model-a @ old", "model-a @ new"), ("model-b @ old", "model-b @ new")}
    code, output = itemscore(
        "compare", "v1/results.json", "v2/results.json", "--label", "old,new", "--out", "cmp"
    )
    assert code == 0, output
    document = json.loads((runs / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert document["sources"] == ["v1/results.json", "v2/results.json"]
    assert document["labels"] == ["old", "new"]
    svg = (runs / "cmp" / "comparison.svg").read_text(encoding="utf-8")
    assert "model-a: new vs old" in svg
    assert "model-b: new vs old" in svg


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["v1/results.json", "v2/results.json", "--label", "old"], "must be two different"),
        (["v1/results.json", "v2/results.json", "--label", "x,x"], "must be two different"),
        (["v1/results.json", "--label", "old,new"], "only v1/results.json is given"),
    ],
    ids=["one-name", "same-names", "one-run"],
)
def test_a_bad_label_is_exit_2(
    runs: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    """--label takes two different names and needs two runs."""
    monkeypatch.chdir(runs)
    code, output = itemscore("compare", *args)
    assert code == 2
    assert said in output


def test_labels_in_python(runs: Path) -> None:
    """compare(a, b, labels=...) names the shared models; a and b by default; checked."""
    a = RunResult.load_json(runs / "v1/results.json")
    b = RunResult.load_json(runs / "v2/results.json")
    named = compare(a, b, labels=("v1", "v2"))
    assert [(c.baseline, c.candidate) for c in named] == [
        ("model-a @ v1", "model-a @ v2"), ("model-b @ v1", "model-b @ v2"),
    ]  # fmt: skip
    plain = compare(a, b)
    assert [c.baseline for c in plain] == ["model-a @ a", "model-b @ a"]
    assert [c.difference for c in plain] == [c.difference for c in named]
    with pytest.raises(ConfigError, match="names two runs, and one run is compared"):
        compare(a, labels=("v1", "v2"))
    with pytest.raises(ConfigError, match="two different, non-empty names"):
        compare(a, b, labels=("v1", "v1"))


def test_run_labels_walk_up_until_the_folders_differ(tmp_path: Path) -> None:
    """runs/a/out vs runs/b/out: a/out and b/out; two files in one folder: their stems."""
    assert run_labels(tmp_path / "a/out/results.json", tmp_path / "b/out/results.json") == (
        "a/out", "b/out",
    )  # fmt: skip
    assert run_labels(tmp_path / "base.json", tmp_path / "cand.json") == ("base", "cand")
    assert run_labels(tmp_path / "results.json", tmp_path / "results.json") == ("a", "b")


def _pages(folder: Path, tex: str) -> tuple[int, str]:
    """comparison.tex in a two-column article after a paragraph: pages, and the log."""
    assert PDFLATEX is not None
    folder.mkdir()
    (folder / "comparison.tex").write_text(tex, encoding="utf-8")
    text = "Paired differences of the models are in the table. " * 12
    (folder / "paper.tex").write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage[T1]{fontenc}\n"
        "\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        f"{text}\n\n\\input{{comparison.tex}}\n\n{text}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    found = re.search(r"Output written on paper\.pdf \((\d+) pages?", log)
    assert found is not None, log[-2000:]
    return int(found.group(1)), log


def _wide_tex() -> str:
    """Long model names and a cost metric: too wide for a column unless scaled."""
    models = ("gpt-4o-mini-2024-07-18_rev#2", "llama-3.1-70b-instruct & co")
    data = [
        ItemResult(id=str(i), model=m, output="Paris", expected="Paris" if i % 4 else "Rome",
                   metadata={"cost": 0.0004 * (1 + k)})
        for k, m in enumerate(models)
        for i in range(120)
    ]  # fmt: skip
    return comparison_tex(compare(score(data, ["exact_match", "f1", "cost"])))


@needs_pdflatex
def test_comparison_tex_fits_one_column_of_a_two_column_paper(
    runs: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """compare --out's comparison.tex, and a wide one, stay on page 1 with no overfull box."""
    monkeypatch.chdir(runs)
    code, output = itemscore("compare", "v1/results.json", "v2/results.json", "--out", "tex")
    assert code == 0, output
    tex = (runs / "tex" / "comparison.tex").read_text(encoding="utf-8")
    assert r"\begin{table}[t]" in tex
    assert "table*" not in tex
    wide = _wide_tex()
    assert r"\resizebox{\columnwidth}{!}{%" in wide
    assert "booktabs,graphicx" in wide
    for name, source in (("cli", tex), ("wide", wide)):
        pages, log = _pages(tmp_path / name, source)
        assert pages == 1, name
        assert "Overfull" not in log, name


def test_comparison_tex_names_minus_signs_and_caption(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Display names, real minus signs, escaped names, and a caption saying what is compared."""
    monkeypatch.chdir(runs)
    code, output = itemscore("compare", "v1/results.json", "v2/results.json", "--out", "cap")
    assert code == 0, output
    tex = (runs / "cap" / "comparison.tex").read_text(encoding="utf-8")
    body = tex[tex.index(r"\midrule") : tex.index(r"\bottomrule")]
    assert "Exact match" in body
    assert "exact_match" not in body
    assert "model-a: v2 vs v1" in body
    assert re.search(r"(?<![$\w])-[0-9.]", body) is None  # no hyphen as a minus sign
    assert "$-$0." in body
    assert "candidate $-$ baseline" in tex
    assert (
        r"\caption{Exact match: v2 against v1 for model-a and model-b on 200 shared items.}" in tex
    )
    assert "default" not in tex.split(r"\caption")[1].split("\n")[0]
    # One run of two models: which model against which, on how many items.
    one_run = comparison_tex(compare(RunResult.load_json(runs / "v1/results.json")))
    assert r"\caption{exact\_match: model-b against model-a on 200 shared items.}" in one_run
    # LaTeX specials in names are escaped, and a suite other than default is named.
    wide = _wide_tex()
    assert r"llama-3.1-70b-instruct \& co" in wide
    assert r"rev\#2" in wide


def test_the_viewer_names_the_models_of_two_runs_by_their_runs(runs: Path) -> None:
    """The viewer's comparison of v1 and v2 shows model-a @ v1 and model-a @ v2."""
    from itemscore.viewer import make_server

    viewer = make_server([runs / "v1", runs / "v2"], 0)
    thread = threading.Thread(target=viewer.serve_forever, args=(0.05,), daemon=True)
    thread.start()

    def get(path: str) -> str:
        connection = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=60)
        try:
            connection.request("GET", path, headers={"Host": f"127.0.0.1:{viewer.port}"})
            answer = connection.getresponse()
            body = answer.read().decode("utf-8")
            assert answer.status == 200, body
            return body
        finally:
            connection.close()

    try:
        tokens = {r["name"]: r["token"] for r in json.loads(get("/api/runs"))}
        page = html.unescape(get(f"/compare?a={tokens['v1']}&b={tokens['v2']}"))
    finally:
        viewer.shutdown()
        thread.join()
        viewer.server_close()
    assert "model-a @ v1" in page
    assert "model-b @ v2" in page
    assert "model-a (a)" not in page


# --------------------------------------------------------------------------- verify --data


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_verify_with_another_data_file_says_the_data_differs_first(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify v1/results.json --data v2.jsonl`: the hashes of both files first, exit 1."""
    monkeypatch.chdir(runs)
    code, output = itemscore("verify", "v1/results.json", "--data", "v2.jsonl")
    assert code == 1
    lines = output.splitlines()
    assert lines[0] == (
        "The data differs: v2.jsonl is not the file the results were computed from. v2.jsonl "
        f"has the SHA-256 {_sha256(runs / 'v2.jsonl')}; v1/results.json records "
        f"{_sha256(runs / 'v1.jsonl')} for {runs / 'v1.jsonl'}."
    )
    assert lines[-1] == (
        "The data differs: v2.jsonl is not the data of v1/results.json; its 2 measurements "
        "recompute as saved from its own items."
    )
    assert "does not recompute" not in output
    code, output = itemscore("verify", "v1/results.json", "--data", "v2.jsonl", "--json")
    document = json.loads(output)
    assert code == 1
    assert (document["agree"], document["data_differs"]) == (False, True)
    assert document["differences"][0].startswith("The data differs: v2.jsonl")
    code, output = itemscore("verify", "v1/results.json", "--data", "v1.jsonl")
    assert code == 0
    assert output.startswith("All 2 measurements and the data file's hash agree")


def test_verify_with_another_data_file_and_an_edited_value_says_both(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data line comes first; the verdict names the data, then the differences."""
    monkeypatch.chdir(runs)
    edited = runs / "edited"
    edited.mkdir()
    for name in ("results.json", "items.parquet"):  # the set's files, not its links
        shutil.copyfile(runs / "v1" / name, edited / name)
    document = json.loads((edited / "results.json").read_text(encoding="utf-8"))
    document["measurements"][0]["value"] += 0.125
    (edited / "results.json").write_text(json.dumps(document), encoding="utf-8")
    code, output = itemscore("verify", "edited/results.json", "--data", "v2.jsonl")
    assert code == 1
    lines = output.splitlines()
    assert lines[0].startswith("The data differs: v2.jsonl is not the file the results were")
    assert lines[-1].startswith("The data differs: v2.jsonl is not the data of edited/results")
    assert lines[-1].endswith("difference(s): edited/results.json does not recompute as saved.")
    assert any("value" in line for line in lines[1:-1])


def test_verify_says_the_data_before_recomputing(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data's difference reaches the caller even when the recomputation then fails."""
    from itemscore import _run
    from itemscore._exceptions import ItemscoreError
    from itemscore.cli._pipeline import verify_results

    said: list[str] = []

    def broken(*args: object, **kwargs: object) -> None:
        raise ItemscoreError("the metric is gone")

    monkeypatch.setattr(_run, "rescore", broken)
    with pytest.raises(ItemscoreError, match="the metric is gone"):
        verify_results(runs / "v1/results.json", data=runs / "v2.jsonl", on_data=said.extend)
    assert len(said) == 1
    assert said[0].startswith(f"The data differs: {runs / 'v2.jsonl'} is not the file")


def test_verify_of_results_without_a_data_hash_says_it_cannot_check(tmp_path: Path) -> None:
    """Results saved from Python record no data hash: that is said, not "data differs"."""
    items = [ItemResult(id=str(i), output="y", expected="y") for i in range(5)]
    saved = score(items, ["exact_match"]).save_json(tmp_path / "results.json")
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "0", "output": "y", "expected": "y"}\n', encoding="utf-8")
    code, output = itemscore("verify", saved, "--data", data)
    assert code == 1
    lines = output.splitlines()
    assert lines[0].startswith(f"The data cannot be checked: {saved} records no data hash")
    assert lines[-1] == (
        f"The data cannot be checked: {saved} records no hash of its data; its measurement "
        "recomputes as saved from its own items."
    )
