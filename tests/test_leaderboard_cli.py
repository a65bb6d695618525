"""`itemscore leaderboard` and `itemscore arena`: the tables, --json, and the files of --out.

Runs are made with `itemscore score ... --out` on generated data (five models, three of them
close), judgments by a simulated judge that favours the answer shown first; what the commands
print and write is checked against the Python API (:func:`itemscore.leaderboard`,
:func:`itemscore.arena`), read back with csv, markdown-it-py and pdflatex.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from click.testing import CliRunner, Result
from markdown_it import MarkdownIt

from itemscore import (
    Arena,
    Leaderboard,
    LeaderboardRow,
    MetricMismatchError,
    Rating,
    RunResult,
    arena,
    leaderboard,
)
from itemscore.cli import cli
from itemscore.reports.leaderboard_files import COLUMNS, leaderboard_tex

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None or shutil.which("kpsewhich") is None,
    reason="pdflatex (texlive-latex-base, texlive-latex-recommended) is not installed: the "
    "Makefile's .venv/.texlive layer installs it as root",
)
HOSTILE = '<img src=x onerror="alert(1)"> | [a](http://x) & \\'
SKILL = {"atlas": 1.2, "birch": 0.35, "cedar": 0.3, "delta": 0.25, HOSTILE: -0.5}
DASH = "\u2013"
FIELDS = [f.name for f in attrs.fields(LeaderboardRow)]


def _write_data(path: Path, skill: dict[str, float], n: int = 300, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(size=n)
    with path.open("w", encoding="utf-8") as handle:
        for model, s in skill.items():
            p = 1 / (1 + np.exp(difficulty - s))
            for i, right in enumerate(rng.random(n) < p):
                row = {"id": f"q{i}", "model": model, "output": "yes" if right else "no",
                       "expected": "yes"}  # fmt: skip
                handle.write(json.dumps(row) + "\n")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _score(folder: Path, skill: dict[str, float]) -> Path:
    data = _write_data(folder / "data.jsonl", skill)
    out = invoke("score", data, "-m", "exact_match", "-m", "token_f1", "-m", "f1",
                 "--out", folder / "run", "--report", "json", "-q")  # fmt: skip
    assert out.exit_code == 0, out.output
    return folder / "run" / "results.json"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of five models scored by `itemscore score --out`."""
    return _score(tmp_path_factory.mktemp("board"), SKILL)


@pytest.fixture(scope="module")
def board(saved: Path) -> Leaderboard:
    return leaderboard(RunResult.load_json(saved), "exact_match")


_LINE = re.compile(r"^\s*(\d+)\s+(.*?)\s+(\d\.\d+)\s+\[[\d., ]+\]\s+(\d+)\u2013(\d+)\s+(\d+)\s*$")


def _printed(text: str) -> list[tuple[int, str, int, int, int]]:
    """(rank, model, rank_low, rank_high, tie group) of each row of the printed table."""
    return [
        (int(m[1]), m[2], int(m[4]), int(m[5]), int(m[6]))
        for m in (_LINE.match(line) for line in text.splitlines())
        if m
    ]


def test_printed_ranks_equal_the_python_api(saved: Path, board: Leaderboard) -> None:
    """The table shows every model's rank, rank range and tie group as leaderboard() gives."""
    out = invoke("leaderboard", saved, "-m", "exact_match")
    assert out.exit_code == 0, out.output
    expected = [(r.rank, r.model, r.rank_low, r.rank_high, r.tie_group) for r in board.rows]
    assert _printed(out.output) == expected
    # The data make atlas first and the hostile model last, the middle three one group.
    assert [r.tie_group for r in board.rows] == [1, 2, 2, 2, 3]
    assert "max-t" in out.output
    assert "300 shared questions" in out.output


def test_a_dashed_rule_separates_tie_groups(saved: Path, board: Leaderboard) -> None:
    """A rule is drawn between tie groups (two for three groups) and nowhere else."""
    out = invoke("leaderboard", saved, "-m", "exact_match")
    lines = out.output.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"╌"}]
    assert len(rules) == max(r.tie_group for r in board.rows) - 1
    for i in rules:  # each between the last model of a group and the first of the next
        before, after = _printed(lines[i - 1])[0], _printed(lines[i + 1])[0]
        assert after[4] == before[4] + 1


def test_narrow_terminals_keep_every_number(saved: Path, board: Leaderboard) -> None:
    """At 60 and 30 columns the intervals and rank ranges are shown whole, never cut."""
    from io import StringIO

    from rich.console import Console

    from itemscore.cli._board_commands import leaderboard_table

    for width in (60, 30):
        buffer = StringIO()
        Console(file=buffer, width=width, color_system=None).print(
            leaderboard_table(board, width=width)
        )
        text = buffer.getvalue()
        assert "…" not in text
        for row in board.rows:
            assert f"{row.rank_low}{DASH}{row.rank_high}" in text


def test_json_lists_the_row_fields_equal_to_the_api(saved: Path, board: Leaderboard) -> None:
    """--json prints one object per model with exactly the LeaderboardRow fields."""
    out = invoke("leaderboard", saved, "-m", "exact_match", "--json")
    data = json.loads(out.output)
    assert [list(d) for d in data] == [FIELDS] * len(board.rows)
    assert data == [row.to_dict() for row in board.rows]


def test_method_seed_and_confidence_reach_the_api(saved: Path) -> None:
    """--method none, --seed and --confidence give what leaderboard() gives with them."""
    out = invoke("leaderboard", saved, "-m", "token_f1", "--json", "--method", "none",
                 "--confidence", "0.9")  # fmt: skip
    run = RunResult.load_json(saved)
    api = leaderboard(run, "token_f1", method="none", confidence=0.9)
    assert json.loads(out.output) == [r.to_dict() for r in api.rows]
    out = invoke("leaderboard", saved, "-m", "token_f1", "--json", "--seed", "7")
    api = leaderboard(run, "token_f1", seed=7)
    assert json.loads(out.output) == [r.to_dict() for r in api.rows]


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A row of leaderboard.csv with the row fields read back as their types."""
    kinds = {f.name: f.type for f in attrs.fields(LeaderboardRow)}
    out: dict[str, Any] = {}
    for name in FIELDS:
        text = row[name]
        if "int" in str(kinds[name]):
            out[name] = int(text)
        elif "float" in str(kinds[name]):
            out[name] = None if text == "" else float(text)
        else:
            out[name] = text
    return out


def test_out_writes_the_three_files(saved: Path, board: Leaderboard, tmp_path: Path) -> None:
    """--out writes leaderboard.csv (reads back equal), .md and .tex, and says so on stderr."""
    out = invoke("leaderboard", saved, "-m", "exact_match", "--out", tmp_path / "lb")
    assert out.exit_code == 0
    assert {p.name for p in (tmp_path / "lb").iterdir()} == {
        "leaderboard.csv", "leaderboard.md", "leaderboard.tex"
    }  # fmt: skip
    with (tmp_path / "lb" / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(COLUMNS)
    assert [_typed(r) for r in rows] == [r.to_dict() for r in board.rows]
    assert {r["metric"] for r in rows} == {"exact_match"}
    assert {r["n_pairs"] for r in rows} == {str(board.n_pairs)}


def _md_rows(text: str) -> tuple[list[list[str]], list[Any]]:
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows: list[list[str]] = []
    for i, token in enumerate(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and tokens[i - 1].type in ("td_open", "th_open"):
            rows[-1].append(token.content)
    return rows, tokens


def _walk(tokens: list[Any]) -> list[Any]:
    out = []
    for token in tokens:
        out.append(token)
        out.extend(_walk(token.children or []))
    return out


def test_markdown_keeps_a_hostile_name_as_text(saved: Path, tmp_path: Path) -> None:
    """leaderboard.md parses as one table; the hostile name makes no HTML, link or cell."""
    invoke("leaderboard", saved, "-m", "exact_match", "--out", tmp_path)
    text = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    rows, tokens = _md_rows(text)
    assert rows[0][:2] == ["Rank", "Model"]
    assert all(len(r) == 6 for r in rows)
    kinds = {t.type for t in _walk(tokens)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in html
    assert "&lt;img src=x" in html
    last = rows[-1]
    assert last[0] == "5"
    assert last[4] == f"5{DASH}5"
    assert last[5] == "3"


def _compile(folder: Path, tex: str) -> str:
    """Compile ``tex`` in a two-column article; the log."""
    assert PDFLATEX is not None
    folder.mkdir(exist_ok=True)
    (folder / "leaderboard.tex").write_text(tex, encoding="utf-8")
    (folder / "paper.tex").write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage[T1]{fontenc}\\usepackage{booktabs}\n"
        "\\begin{document}\n\\input{leaderboard.tex}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert proc.returncode == 0, log[-3000:]
    return log


def test_tex_is_one_column_with_rules_between_tie_groups(saved: Path, board: Leaderboard) -> None:
    r"""A table (not table*), \\small, booktabs, a \\midrule between groups, caption, label."""
    tex = leaderboard_tex(board)
    assert r"\begin{table}[htbp]" in tex
    assert "table*" not in tex
    assert r"\small" in tex
    assert r"\toprule" in tex
    assert r"\bottomrule" in tex
    groups = max(r.tie_group for r in board.rows)
    assert tex.count(r"\midrule") == 1 + (groups - 1)  # under the header, then between groups
    assert r"\caption{" in tex
    assert r"\label{tab:itemscore-leaderboard-exact-match-" in tex
    assert "<" not in tex
    assert r"\textless{}img" in tex


def test_tex_writes_a_minus_in_math() -> None:
    """Negative values and interval ends are typeset with a math minus."""
    row = LeaderboardRow(model="m", value=-0.25, ci_low=-0.5, ci_high=0.1, n=10)
    board = Leaderboard(rows=(row,), metric="delta", method="max-t", confidence=0.95, n_pairs=10)
    tex = leaderboard_tex(board)
    assert "$-$0.2" in tex
    assert "{[}$-$0.5" in tex
    assert re.search(r"[^$]-0\.", tex) is None


@needs_pdflatex
@pytest.mark.parametrize(
    "models",
    [
        list(SKILL),
        ["meta-llama/Llama-3.1-405B-Instruct-Turbo-2024-07-23", "x" * 70, "50% & $x$ #1 _ {a}"],
    ],
    ids=["five-models", "long-names"],
)
def test_tex_compiles_in_a_two_column_article_without_overfull_boxes(
    tmp_path: Path, models: list[str]
) -> None:
    """pdflatex typesets it in one column of a two-column article: no overfull box."""
    rows = tuple(
        LeaderboardRow(model=m, value=0.9 - 0.1 * i, ci_low=0.85 - 0.1 * i,
                       ci_high=0.95 - 0.1 * i, n=100, rank=i + 1, rank_low=max(1, i),
                       rank_high=min(len(models), i + 2), tie_group=1 + i // 2)
        for i, m in enumerate(models)
    )  # fmt: skip
    board = Leaderboard(rows=rows, metric="exact_match", method="max-t", confidence=0.95,
                        n_pairs=100, n_resamples=1000)  # fmt: skip
    log = _compile(tmp_path / "paper", leaderboard_tex(board, suite="qa_&_more"))
    assert "Overfull" not in log
    assert "(/etc/" not in log


@needs_pdflatex
def test_tex_of_the_command_compiles(saved: Path, tmp_path: Path) -> None:
    """The leaderboard.tex that --out writes compiles without an overfull box."""
    invoke("leaderboard", saved, "-m", "exact_match", "--out", tmp_path / "lb")
    log = _compile(tmp_path / "paper", (tmp_path / "lb" / "leaderboard.tex").read_text())
    assert "Overfull" not in log


def test_several_files_rank_their_models_together(tmp_path: Path, board: Leaderboard) -> None:
    """Two runs holding different models rank as one run of them all; file names in errors."""
    first = dict(list(SKILL.items())[:2])
    second = dict(list(SKILL.items())[2:])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _score(tmp_path / "a", first)
    b = _score(tmp_path / "b", second)
    out = invoke("leaderboard", a, b, "-m", "exact_match", "--json")
    assert out.exit_code == 0, out.output
    assert [r["model"] for r in json.loads(out.output)] == [r.model for r in board.rows]
    out = invoke("leaderboard", a, a, "-m", "exact_match")
    assert out.exit_code == 2
    assert f"in {a} and {a}" in out.output  # the files, not `results[0]`


def test_bad_input_exits_2_naming_the_file_and_the_fix(saved: Path, tmp_path: Path) -> None:
    """Not a results.json, an unknown label, a metric with its own aggregate: exit 2."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = invoke("leaderboard", bad, "-m", "exact_match", "--out", tmp_path / "lb")
    assert out.exit_code == 2
    assert str(bad) in out.output
    assert not (tmp_path / "lb").exists()
    out = invoke("leaderboard", saved, "-m", "exact_match_")
    assert out.exit_code == 2
    assert str(saved) in out.output
    assert "Did you mean 'exact_match'" in out.output
    out = invoke("leaderboard", saved, "-m", "f1")
    assert out.exit_code == 2
    assert "not a mean over questions" in out.output
    out = invoke("leaderboard", saved, "-m", "exact_match", "--confidence", "1.5")
    assert out.exit_code == 2
    assert "confidence" in out.output
    (tmp_path / "file").write_text("x")
    out = invoke("leaderboard", saved, "-m", "exact_match", "--out", tmp_path / "file")
    assert out.exit_code == 2
    assert "is a file" in out.output
    out = invoke("leaderboard", saved)
    assert out.exit_code == 2
    assert "--metric" in out.output


def test_help_lists_the_command() -> None:
    """`itemscore --help` lists leaderboard."""
    assert "leaderboard" in invoke("--help").output


def test_a_name_ending_in_a_backslash_keeps_its_cell() -> None:
    """results.md too: a model name ending in a backslash does not swallow the cell's pipe."""
    from itemscore import ItemResult, score
    from itemscore.reports.results_md import markdown_table

    items = [
        ItemResult(id=str(i), model=m, output="a", expected="a" if i % 2 else "b")
        for m in ("ends\\", "plain")
        for i in range(10)
    ]
    text = markdown_table(score(items, ["exact_match"], suite_id="s"))
    rows, _ = _md_rows(text)
    assert {len(r) for r in rows} == {8}
    assert "<td>ends\\</td>" in MarkdownIt("commonmark").enable("table").render(text)


# --------------------------------------------------------------------------- arena

STRENGTH = {"atlas": 0.8, "birch": 0.2, "cedar": 0.1, "ember": -0.6, "$\\frac{x <b>|": -0.1}
ARENA_MAP = {"id": "prompt", "model_a": "left"}


@pytest.fixture(scope="module")
def votes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Judgments of 300 prompts by two judges who favour the answer shown first."""
    rng = np.random.default_rng(1)
    models = list(STRENGTH)
    path = tmp_path_factory.mktemp("arena") / "votes.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for prompt in range(300):
            a, b = rng.choice(models, size=2, replace=False)
            edge = STRENGTH[a] - STRENGTH[b] + 0.4
            for judge in ("judge-1", "judge-2"):
                tie = rng.random() < 0.15
                winner = "tie" if tie else ("a" if rng.random() < 1 / (1 + np.exp(-edge)) else "b")
                row = {"prompt": f"p{prompt}", "left": str(a), "model_b": str(b),
                       "winner": winner, "judge": judge}  # fmt: skip
                handle.write(json.dumps(row) + "\n")
    return path


@pytest.fixture(scope="module")
def rated(votes: Path) -> Arena:
    return arena(votes, ARENA_MAP)


def _arena(votes: Path, *args: str | Path) -> Result:
    return invoke("arena", votes, "--map", "id=prompt", "--map", "model_a=left", *args)


_RATING = re.compile(r"^\s*(\d+)\s+(.*?)\s+(\d+)\s+\[[\d, ]+\]\s+(\d+)\u2013(\d+)\s+(\d+)\s*$")


def test_arena_prints_ratings_and_the_position_bias_as_the_api(votes: Path, rated: Arena) -> None:
    """The table shows each rating's rank, range and group; the notes the position bias."""
    out = _arena(votes)
    assert out.exit_code == 0, out.output
    printed = [
        (int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6]))
        for m in (_RATING.match(line) for line in out.output.splitlines())
        if m
    ]
    expected = [
        (r.rank, r.model, round(r.rating), r.rank_low, r.rank_high, r.tie_group)
        for r in rated.ratings.values()
    ]
    assert printed == expected
    bias = rated.position_bias
    assert bias.low is not None
    assert bias.low > 0.5
    text = " ".join(out.output.split())
    assert f"of {bias.n} decided judgments: the judge favours the answer shown first" in text
    assert f"{rated.judge_agreement:.3f}" in text
    assert "600 judgments" in text


def test_arena_json_lists_the_rating_fields(votes: Path, rated: Arena) -> None:
    """--json prints one object per model with exactly the Rating fields, equal to arena()."""
    data = json.loads(_arena(votes, "--json").output)
    fields = [f.name for f in attrs.fields(Rating)]
    assert [list(d) for d in data] == [fields] * len(rated.ratings)
    assert data == [r.to_dict() for r in rated.ratings.values()]


def test_arena_options_reach_the_api(votes: Path) -> None:
    """--method, --seed and --confidence give what arena() gives with them."""
    data = json.loads(
        _arena(votes, "--json", "--method", "none", "--seed", "3", "--confidence", "0.9").output
    )
    api = arena(votes, ARENA_MAP, method="none", seed=3, confidence=0.9)
    assert data == [r.to_dict() for r in api.ratings.values()]


def test_arena_out_writes_csvs_markdown_and_the_plot(
    votes: Path, rated: Arena, tmp_path: Path
) -> None:
    """arena.csv and win_rates.csv read back equal; arena.md is text; the plot is drawn."""
    out = _arena(votes, "--out", tmp_path)
    assert out.exit_code == 0, out.output
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"arena.csv", "arena.md", "win_rates.csv", "arena.png", "arena.svg"}
    with (tmp_path / "arena.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    back = [
        {"model": r["model"], "rating": float(r["rating"]),
         "ci_low": float(r["ci_low"]) if r["ci_low"] else None,
         "ci_high": float(r["ci_high"]) if r["ci_high"] else None,
         **{k: int(r[k]) for k in ("rank", "rank_low", "rank_high", "tie_group")}}
        for r in rows
    ]  # fmt: skip
    assert back == [r.to_dict() for r in rated.ratings.values()]
    with (tmp_path / "win_rates.csv").open(encoding="utf-8", newline="") as handle:
        matrix = list(csv.reader(handle))
    models = matrix[0][1:]
    assert models == list(rated.ratings)
    for line in matrix[1:]:
        got = {o: float(x) for o, x in zip(models, line[1:]) if x}
        assert got == dict(rated.win_rates.get(line[0], {}))
    text = (tmp_path / "arena.md").read_text(encoding="utf-8")
    md_rows, tokens = _md_rows(text)
    kinds = {t.type for t in _walk(tokens)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}
    assert {len(r) for r in md_rows[: 1 + len(rated.ratings)]} == {6}
    assert (tmp_path / "arena.png").read_bytes().startswith(b"\x89PNG")
    svg = (tmp_path / "arena.svg").read_text(encoding="utf-8")
    assert "<svg" in svg
    assert "group 1" in svg  # the tie groups are labelled


def test_the_plot_is_the_same_bytes_for_the_same_data(rated: Arena) -> None:
    """No timestamp or random id in the plot files."""
    from itemscore.reports.arena_files import arena_plot

    assert arena_plot(rated) == arena_plot(rated)


def test_arena_bad_input_exits_2_naming_the_row_and_the_fix(votes: Path, tmp_path: Path) -> None:
    """A missing column names the file, the row and --map; a bad --map; a model never beaten."""
    out = invoke("arena", votes)
    assert out.exit_code == 2
    assert f"{votes}:1" in out.output
    assert "--map ROLE=COLUMN" in out.output
    out = invoke("arena", votes, "--map", "winner")
    assert out.exit_code == 2
    assert "must be ROLE=COLUMN" in out.output
    out = _arena(votes, "--map", "wnner=x")
    assert out.exit_code == 2
    assert "Did you mean 'winner'" in out.output
    unbeaten = tmp_path / "unbeaten.csv"
    unbeaten.write_text("model_a,model_b,winner\nx,y,a\ny,z,a\nz,y,a\n")
    out = invoke("arena", unbeaten, "--out", tmp_path / "out")
    assert out.exit_code == 2
    assert "'x' never lost" in out.output
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- --report leaderboard


def test_report_leaderboard_writes_the_files_of_every_rankable_metric(saved: Path) -> None:
    """`score --report leaderboard`: each ranked metric's three files, f1 listed as left out."""
    from itemscore.reports.leaderboard_files import leaderboard_texts

    folder = saved.parent.parent
    data = folder / "data.jsonl"
    metrics = ("-m", "exact_match", "-m", "token_f1", "-m", "f1")
    reports = ("--report", "leaderboard", "--report", "json")
    out = invoke("score", data, *metrics, "--out", folder / "boards", *reports, "-q")
    assert out.exit_code == 0, out.output
    boards = folder / "boards" / "leaderboard"
    run = RunResult.load_json(folder / "boards" / "results.json")
    for label in ("exact_match", "token_f1"):
        expected = leaderboard_texts(leaderboard(run, label), suite=run.suite_id)
        for name, text in expected.items():
            assert (boards / label / name).read_text(encoding="utf-8") == text
    assert not (boards / "f1").exists()
    readme = (boards / "README.md").read_text(encoding="utf-8")
    assert "|exact_match|exact_match/|5|300|3|" in readme
    assert "- f1: The metric 'f1'" in readme


def test_report_leaderboard_of_one_model_says_why_it_has_none(tmp_path: Path) -> None:
    """A run of one model gets a README saying a leaderboard needs several, and no board."""
    data = _write_data(tmp_path / "one.jsonl", {"solo": 0.0}, n=20)
    out = invoke("score", data, "-m", "exact_match", "--out", tmp_path / "out",
                 "--report", "leaderboard", "-q")  # fmt: skip
    assert out.exit_code == 0, out.output
    folder = tmp_path / "out" / "leaderboard"
    assert {p.name for p in folder.iterdir()} == {"README.md"}
    assert "one model" in (folder / "README.md").read_text(encoding="utf-8")


def test_the_default_report_set_has_no_leaderboard() -> None:
    """Leaderboards are written when asked for, as eee and md are."""
    from itemscore.reports import BUILTIN_FORMATS, ON_REQUEST, resolve_formats

    assert BUILTIN_FORMATS["leaderboard"] == "leaderboard"
    assert "leaderboard" in ON_REQUEST
    assert "leaderboard" not in [name for name, _, _ in resolve_formats(None, notice=print)]


def test_metric_folders_are_plain_and_unique() -> None:
    """Labels become folder names without separators or dots in front, never the same twice."""
    from itemscore.reports.leaderboard_files import _folder_names

    names = dict(_folder_names(["a/b", "../etc", "Acc", "acc", "", "x\x1b[2J"]))
    assert names == {"a/b": "a_b", "../etc": "etc", "Acc": "Acc", "acc": "acc-2", "": "metric",
                     "x\x1b[2J": "x_x1b_2J"}  # fmt: skip


def test_runs_giving_the_label_to_different_metrics_are_not_ranked_together(
    tmp_path: Path,
) -> None:
    """Two runs whose `exact_match` label names different metrics measure different things."""
    first = _write_data(tmp_path / "a.jsonl", {"atlas": 1.0})
    second = _write_data(tmp_path / "b.jsonl", {"birch": 0.5})
    paths = []
    for data, metric in ((first, "exact_match"), (second, "includes@exact_match")):
        out = tmp_path / data.stem
        done = invoke("score", data, "-m", metric, "--out", out, "--report", "json", "-q")
        assert done.exit_code == 0, done.output
        paths.append(out / "results.json")
    runs = [RunResult.load_json(p) for p in paths]
    with pytest.raises(MetricMismatchError, match="'includes' in `results\\[1\\]`"):
        leaderboard(runs, "exact_match")
    refused = CliRunner().invoke(cli, ["leaderboard", *map(str, paths), "-m", "exact_match"])
    assert refused.exit_code == 2, refused.output
    assert f"'includes' in {paths[1]}" in refused.output
    # the same metric under the label in both runs ranks as before
    same = invoke("score", second, "-m", "exact_match", "--out", tmp_path / "c", "-q",
                  "--report", "json")  # fmt: skip
    assert same.exit_code == 0, same.output
    board = leaderboard([runs[0], RunResult.load_json(tmp_path / "c" / "results.json")],
                        "exact_match")  # fmt: skip
    assert [row.model for row in board.rows] == ["atlas", "birch"]
