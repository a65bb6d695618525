"""Shell completion: metric names for -m and --extra-metrics, report formats for --report."""

from __future__ import annotations

from click.testing import CliRunner

from itemscore.cli import cli


def complete(words: str) -> list[str]:
    """What bash would be offered for the last word of ``words`` (click's bash protocol)."""
    parts = words.split(" ")
    env = {
        "_ITEMSCORE_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(parts) - 1),
    }
    out = CliRunner().invoke(cli, [], env=env, prog_name="itemscore")
    assert out.exit_code == 0, out.output
    return [line.split(",", 1)[1] for line in out.output.splitlines() if line]


def test_metric_names_complete_after_m() -> None:
    """-m completes installed metric ids; --extra-metrics completes after a comma too."""
    assert complete("itemscore score data.jsonl -m exact") == ["exact_match"]
    offered = complete("itemscore score data.jsonl -m ")
    assert {"exact_match", "token_f1", "f1", "cost", "answered_rate"} <= set(offered)
    assert "answered-rate" in offered  # the entry-point name works as well
    assert complete("itemscore score d.jsonl --extra-metrics exact_match,tok") == [
        "exact_match,token_f1"
    ]
    assert "exact_match" in complete("itemscore rescore results.json -m ex")


def test_report_formats_complete_after_report() -> None:
    """--report completes every format, the on-request ones included."""
    offered = complete("itemscore score data.jsonl --report ")
    assert {"json", "items", "jsonl", "csv", "tex", "xlsx", "html", "md"} <= set(offered)
    assert complete("itemscore run run.yaml --report x") == ["xlsx"]
