"""--output never destroys what its path is: a symlink is written through, a character device
or a FIFO is streamed to, anything else is refused, and so is a path that is one of the
command's inputs (its data, the run database, a results file it reads). Writing onto an
existing file replaces it, and says so.

No test here names a real device (/dev/stdout, /dev/null): code that got it wrong would
break them for the whole machine. They use links and nodes of their own in tmp_path."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from standins import StandIns

from localeval.cli import main

ROWS = [
    {
        "sample_id": f"s{i}",
        "question": f"Q{i}?",
        "answer": f"It is {i}.",
        "reference_answer": "It is 1.",
    }
    for i in range(3)
]


@pytest.fixture
def data(tmp_path: Path, stand_ins: StandIns) -> Path:
    stand_ins.forbid()  # bleu needs no model
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def evaluate(data: Path, output: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "bleu", "--no-progress", "-o", str(output), *args]
    )


def test_a_symlink_is_written_through_and_stays_a_link(data: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = evaluate(data, link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text(encoding="utf-8"))["run"]["metrics"] == ["bleu"]


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A FIFO with a reader: what was written to it, once the writer closes it."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    received: list[bytes] = []

    def read() -> None:
        with path.open("rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    yield path, received
    if reader.is_alive():  # nothing ever opened it for writing: let the reader go
        with path.open("wb"):
            pass
    reader.join(5)


def test_a_fifo_is_streamed_to_not_replaced(data: Path, fifo: tuple[Path, list[bytes]]) -> None:
    path, received = fifo
    result = evaluate(data, path)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    threading.Event().wait(0.2)
    assert json.loads(b"".join(received))["run"]["metrics"] == ["bleu"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_character_device_is_written_to_not_replaced(data: Path, tmp_path: Path) -> None:
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of the test's own
    result = evaluate(data, node)
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.lstat(node).st_mode)
    assert "Results written to" in result.stdout


def test_a_link_to_standard_output_writes_there(data: Path, tmp_path: Path) -> None:
    """What -o /dev/stdout is, in a real process whose stdout is a pipe."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    models = tmp_path / "fake.toml"
    models.write_text('[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "localeval.cli",
            "evaluate",
            str(data),
            "-m",
            "bleu",
            "-o",
            str(link),
        ],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            "LOCALEVAL_MODELS": str(models),
        },
    )
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()
    table, _, rest = done.stdout.partition("{")
    assert table.startswith("metric ")  # what was printed first comes first
    results = json.JSONDecoder().raw_decode("{" + rest)[0]
    assert results["run"]["metrics"] == ["bleu"]
    assert done.stdout.endswith(
        f"Results written to {link}\nRun {results['run']['id']} saved in "
        f"{os.environ['LOCALEVAL_DB']}\n"
    )


def test_what_is_not_a_file_device_or_fifo_is_refused(data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    refused = evaluate(data, folder)
    assert (refused.exit_code, refused.stderr) == (2, f"Error: --output {folder}: is a directory\n")

    listening = socket.socket(socket.AF_UNIX)
    path = tmp_path / "sock"
    listening.bind(str(path))
    try:
        result = evaluate(data, path)
    finally:
        listening.close()
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {path}: is neither a regular file nor a character device or FIFO; "
        "refusing to write there\n"
    )
    assert stat.S_ISSOCK(os.lstat(path).st_mode)

    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "r.json")
    result = evaluate(data, dangling)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {dangling}: is a symlink to {tmp_path / 'nowhere' / 'r.json'}, which "
        "does not exist\n"
    )
    assert dangling.is_symlink()


def test_the_data_file_is_never_the_output(data: Path, tmp_path: Path) -> None:
    before = data.read_bytes()
    result = evaluate(data, data)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: --output {data}: is the same file as the data file, {data}; refusing to "
        "overwrite it\n"
    )
    hard = tmp_path / "hard.jsonl"
    os.link(data, hard)  # the same file under another name
    assert evaluate(data, hard).exit_code == 2
    assert data.read_bytes() == before


def test_the_database_and_its_journals_are_never_the_output(data: Path, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert evaluate(data, tmp_path / "first.json", "--db", str(db)).exit_code == 0
    before = db.read_bytes()
    for path, what in [
        (db, "the run database (--db)"),
        (db.with_name("runs.db-wal"), "the run database's wal file"),
        (db.with_name("runs.db-journal"), "the run database's journal file"),
    ]:
        result = evaluate(data, path, "--db", str(db))
        assert result.exit_code == 2, path
        assert result.stderr == (
            f"Error: --output {path}: is the same file as {what}, {path}; refusing to "
            "overwrite it\n"
        )
    assert db.read_bytes() == before
    # the default database (LOCALEVAL_DB here) is protected as well
    default = Path(os.environ["LOCALEVAL_DB"])
    assert evaluate(data, tmp_path / "x.json").exit_code == 0
    assert evaluate(data, default).exit_code == 2


def test_an_existing_output_is_overwritten_and_that_is_said(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("{}", encoding="utf-8")
    result = evaluate(data, out)
    assert result.exit_code == 0
    assert f"Warning: --output {out} exists; it will be overwritten\n" in result.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["run"]["metrics"] == ["bleu"]
    assert "Warning" not in evaluate(data, tmp_path / "new.json").stderr


def test_report_and_diff_never_overwrite_what_they_read(data: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    assert evaluate(data, results).exit_code == 0
    before = results.read_bytes()
    report = CliRunner().invoke(main, ["report", str(results), "-f", "json", "-o", str(results)])
    assert report.exit_code == 2
    assert report.stderr == (
        f"Error: --output {results}: is the same file as a results file reported, {results}; "
        "refusing to overwrite it\n"
    )
    diff = CliRunner().invoke(main, ["diff", str(results), "latest", "-o", str(results)])
    assert diff.exit_code == 2
    assert results.read_bytes() == before

    link = tmp_path / "report.html"
    page = tmp_path / "page.html"
    page.write_text("old", encoding="utf-8")
    link.symlink_to(page)
    shown = CliRunner().invoke(main, ["report", "latest", "-o", str(link)])
    assert shown.exit_code == 0, shown.output
    assert link.is_symlink() and page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    again = CliRunner().invoke(main, ["runs", "show", "latest", "-o", os.environ["LOCALEVAL_DB"]])
    assert again.exit_code == 2


def test_a_replaced_output_keeps_its_permissions(data: Path, tmp_path: Path) -> None:
    """Results hold the data's text: a private file stays private when it is replaced."""
    private = tmp_path / "private.json"
    private.write_text("{}", encoding="utf-8")
    private.chmod(0o600)
    assert evaluate(data, private).exit_code == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert json.loads(private.read_text(encoding="utf-8"))["run"]["metrics"] == ["bleu"]
    # through a symlink, the target's permissions
    target = tmp_path / "target.json"
    target.write_text("{}", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert evaluate(data, link).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    # a new file: an ordinary one under the umask, as open() would make it
    umask = os.umask(0o027)
    try:
        assert evaluate(data, tmp_path / "new.json").exit_code == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


def test_merge_never_overwrites_the_database_or_a_shard(data: Path, tmp_path: Path) -> None:
    """`runs merge -o` onto the --db file replaced the database with JSON, and onto a shard
    overwrote its own input; each is refused before anything is opened or written."""
    rows = [{**ROWS[0], "sample_id": f"m{i}"} for i in range(10)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "z.db"
    shards = [tmp_path / "z1.json", tmp_path / "z2.json"]
    for k, shard in enumerate(shards, start=1):
        assert evaluate(data, shard, "--db", str(db), "--shard", f"{k}/2").exit_code == 0
    link = tmp_path / "link.json"
    link.symlink_to(shards[1])
    files = [db, *shards, db.with_name("z.db-wal")]
    before = {path: path.read_bytes() for path in files if path.exists()}

    def merge(output: Path) -> Result:
        names = [str(s) for s in shards]
        return CliRunner().invoke(
            main, ["runs", "merge", *names, "--db", str(db), "-o", str(output)]
        )

    for output, what, named in [
        (db, "the run database (--db)", db),
        (shards[1], "a shard merged", shards[1]),
        (link, "a shard merged", shards[1]),
    ]:
        result = merge(output)
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            f"Error: --output {output}: is the same file as {what}, {named}; refusing to "
            "overwrite it\n"
        )
    assert {path: path.read_bytes() for path in files if path.exists()} == before
    assert link.is_symlink()
    # onto another existing file: merged, and said first
    other = tmp_path / "merged.json"
    other.write_text("{}", encoding="utf-8")
    merged = merge(other)
    assert merged.exit_code == 0, merged.output
    assert merged.stderr == f"Warning: --output {other} exists; it will be overwritten\n"
    assert len(json.loads(other.read_text(encoding="utf-8"))["samples"]) == 10
