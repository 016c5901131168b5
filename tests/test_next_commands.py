"""Every "run this next" command localeval prints works when pasted as printed: it keeps
each option that identifies the run (-m, --db, --models, ...), so it continues that run
rather than starting another (issue 52, item 1)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from test_until_decided import (  # hash_judge: its autouse stand-ins, never the real judge
    FAITHFULNESS,
    N_SAMPLES,
    baseline_run,
    hash_judge,  # noqa: F401
    run,
    version,
    words,
)

from localeval.cli.options import command_to_continue


def pasted(printed: str) -> list[str]:
    """The words of a printed `localeval ...` command, as a shell would split them."""
    command = shlex.split(printed)
    assert command[0] == "localeval"
    return command[1:]


def test_a_stopped_comparison_is_completed_by_the_command_it_prints(tmp_path: Path) -> None:
    baseline_run(tmp_path)
    new = version(tmp_path / "new.jsonl", unsupported=True)
    db = tmp_path / "h.db"
    assert run("evaluate", new, *FAITHFULNESS, "--db", db).exit_code == 0  # a baseline in h.db
    new2 = version(tmp_path / "new2.jsonl", unsupported=False, tag="Changed")
    args = [*FAITHFULNESS, "--db", db, "--baseline", "latest", "--until-decided", "--margin=0.2"]
    stopped = run("evaluate", new2, *args, "-o", tmp_path / "stopped.json")
    said = words(stopped.stdout)
    assert "stopped by design" in said, said
    printed = said.split("samples scored: `", 1)[1].split("` scores the rest", 1)[0]
    assert "--until-decided" not in printed and "--margin" not in printed
    assert "--db" in printed and "-m faithfulness" in printed
    out = tmp_path / "rest.json"
    rest = run(*pasted(printed), "-o", out, "--no-progress")
    assert rest.exit_code in (0, 1), rest.output
    first = json.loads((tmp_path / "stopped.json").read_text())["run"]["id"]
    whole = json.loads(out.read_text())
    assert whole["run"]["id"] == first  # the stopped run, completed
    assert len(whole["samples"]) == N_SAMPLES


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        (
            [
                "evaluate",
                "d.jsonl",
                "-m",
                "bleu",
                "--until-decided",
                "--margin",
                "0.1",
                "--db",
                "h",
            ],
            "localeval evaluate d.jsonl -m bleu --db h",
        ),
        (
            ["evaluate", "my data.jsonl", "--no-resume", "--max-calls", "3"],
            "localeval evaluate 'my data.jsonl' --resume R1 --max-calls 3",
        ),
    ],
)
def test_the_command_to_continue_is_the_typed_one_less_what_stops_it(
    typed: list[str], expected: str
) -> None:
    import click

    from localeval.cli.options import ARGV

    with click.Context(click.Command("x")) as context:
        context.meta[ARGV] = typed
        assert command_to_continue("R1", ["--until-decided"], ["--margin"]) == expected


def test_a_printed_command_names_a_store_that_is_not_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from localeval.database import ServerUrl, db_words
    from localeval.history.cleanup import labels_kept_message

    monkeypatch.delenv("LOCALEVAL_DB", raising=False)
    assert db_words(None) == "" and db_words(Path(".localeval/localeval.db")) == ""
    said = labels_kept_message({"r1": 3}, Path("team runs/h.db"))
    assert "`localeval labels export r1 --db 'team runs/h.db' -o labels.jsonl`" in said
    url = ServerUrl("postgresql://ann:secret@db.example:5432/evals")
    assert "secret" not in db_words(url) and db_words(url).startswith(" --db ")


def test_a_stopped_run_says_how_many_of_its_samples_were_scored() -> None:
    """A run --until-decided stopped has more samples than it scored: the labels note says
    both, never 'only 24 samples' (issue 52, item 4)."""
    from localeval.results.corrected import CorrectedSummary, corrected_words

    entry = CorrectedSummary(None, 0, 40, n_samples=24)
    stopped = corrected_words(entry, "`localeval review R`", planned=60)
    assert "this run has 24 of its 60 samples scored" in stopped
    assert "only" not in stopped
    assert "this run has only 24 samples" in corrected_words(entry, "`localeval review R`")
    none_yet = CorrectedSummary(None, 0, 40, n_samples=0)
    assert "0 of its 60 samples scored" in corrected_words(none_yet, "r", planned=60)
