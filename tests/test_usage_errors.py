"""What the user got wrong is a usage error (exit 2, one line) found before any model loads,
and the odd but reasonable works: model settings checked when models.toml is read, any file
name, `-` for standard input, rows of a minified JSON array named by number, a history that
cannot be written still read, a foreign SQLite file left alone, runs deleted and pruned,
gzip-compressed data."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from run_db import query
from standins import StandIns

from localeval.backends import register_judge_backend, unregister_backend
from localeval.cli import main
from localeval.database import Location
from localeval.errors import JudgeError, UsageError
from localeval.judge import ModelIdentity

ROOT = Path(__file__).resolve().parent.parent
ROWS = [
    {
        "sample_id": f"s{i}",
        "question": f"Q{i}?",
        "contexts": ["A b c d."],
        "answer": "A b c d.",
        "reference_answer": "A b c d.",
    }
    for i in range(3)
]
JSONL = "".join(json.dumps(r) + "\n" for r in ROWS)


def run(*args: Any, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture
def data(tmp_path: Path, stand_ins: StandIns) -> Path:
    stand_ins.forbid()  # BLEU needs no model
    path = tmp_path / "d.jsonl"
    path.write_text(JSONL, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("n_ctx = -5", "'n_ctx' must be a number of tokens, at least 64; got -5"),
        ("batch_size = 0", "'batch_size' must be a number of tokens, at least 1; got 0"),
        (
            "gpu_layers = -2",
            "'gpu_layers' must be a number of layers (-1: all), at least -1; got -2",
        ),
        (
            "threads = -1",
            "'threads' must be a number of threads (0: one per core), at least 0; got -1",
        ),
        ("seed = -7", "'seed' must be a seed, from 0 to 4294967295; got -7"),
        ('sha256 = "abc"', "'sha256' must be 64 hexadecimal digits, got 'abc'"),
        ('type_k = "q5_1"', "'type_k' must be one of f16, q8_0, q4_0; got 'q5_1'"),
        ("type_v = 8", "'type_v' must be str, got 8"),
        ('flash_attn = "yes"', "'flash_attn' must be bool, got 'yes'"),
        (
            'type_v = "q8_0"',
            "'type_v' = 'q8_0' needs flash_attn = true (llama.cpp quantizes the value cache "
            "only with flash attention)",
        ),
    ],
)
def test_bad_model_settings_are_refused_when_models_toml_is_read(
    tmp_path: Path, data: Path, setting: str, message: str
) -> None:
    models = tmp_path / "m.toml"
    models.write_text(f'[judges.j]\npath = "j.gguf"\n{setting}\n', encoding="utf-8")
    result = run("evaluate", data, "-m", "faithfulness", "--models", models)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {models} [judges.j]: {message}\n"
    assert run("runs", "list").stdout.startswith("No runs yet")


class BrokenBackend:
    """A judge that is identified (its file checked) but fails to load, as llama.cpp does on
    a setting it cannot use."""

    keys: frozenset[str] = frozenset()
    cacheable = True

    def settings(self, table: Any, where: str, base: Path) -> None:
        return None

    def identify(self, name: str, settings: None) -> ModelIdentity:
        return ModelIdentity(name, {"sha256": "9" * 64})

    def load(self, name: str, settings: None) -> Any:
        raise JudgeError("llama.cpp could not load j.gguf: Failed to create llama_context")

    def status(self, settings: None) -> Any:
        raise NotImplementedError


def test_a_judge_that_fails_to_load_leaves_no_run_to_resume(tmp_path: Path, data: Path) -> None:
    register_judge_backend("broken", BrokenBackend())
    try:
        models = tmp_path / "m.toml"
        models.write_text('[judges.j]\nbackend = "broken"\n', encoding="utf-8")
        result = run("evaluate", data, "-m", "faithfulness", "--models", models, "--no-progress")
    finally:
        unregister_backend("broken")
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-1] == (
        "Error: llama.cpp could not load j.gguf: Failed to create llama_context"
    )
    assert "re-run" not in result.stderr
    assert run("runs", "list").stdout.splitlines()[1:] == []


def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path, data: Path) -> None:
    odd = tmp_path / os.fsdecode(b"d\xff.jsonl")
    shutil.copy(data, odd)
    out = tmp_path / "r.json"
    result = run("evaluate", odd, "-m", "bleu", "-o", out, "--no-progress")
    assert result.exit_code == 0, result.output
    shown = f"{tmp_path}/d\\xff.jsonl"
    assert result.stderr == f"Loaded 3 samples from {shown}; metrics: bleu\n"
    assert json.loads(out.read_text(encoding="utf-8"))["run"]["dataset"] == shown
    assert run("runs", "list").stdout.splitlines()[1].endswith(f"  {shown}")


def test_a_dash_reads_standard_input(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run("evaluate", "-", "-m", "bleu", "-o", out, "--no-progress", input=JSONL)
    assert result.exit_code == 0, result.output
    assert result.stderr == "Loaded 3 samples from <stdin>; metrics: bleu\n"
    assert json.loads(out.read_text(encoding="utf-8"))["run"]["dataset"] == "<stdin>"
    array = json.dumps(ROWS)
    assert run("evaluate", "-", "-m", "bleu", input=array).exit_code == 0
    packed = gzip.compress(JSONL.encode())
    assert run("evaluate", "-", "-m", "bleu", input=packed).exit_code == 0
    elsewhere = run("compare-answers", "-", input=JSONL)
    assert (elsewhere.exit_code, elsewhere.stderr) == (
        2,
        "Error: -: standard input is read by `localeval evaluate` only; give a file\n",
    )
    again = run("evaluate", "-", "-m", "bleu", input=JSONL + '{"answer": "x"}\n')
    assert (again.exit_code, again.stderr) == (
        2,
        "Error: <stdin>, line 4, field 'question': missing (also accepted as 'user_input')\n",
    )


def write_into(fifo: Path, text: str) -> threading.Thread:
    """A writer of `text` into the FIFO, once something opens it to read."""

    def write() -> None:
        with contextlib.suppress(OSError), fifo.open("w", encoding="utf-8") as handle:
            handle.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_a_named_pipe_is_read_once(data: Path, tmp_path: Path) -> None:
    """A FIFO as DATA is copied to a file first, as standard input is: read twice (checked,
    then scored), the second read waited forever for a writer."""
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "r.json"
    models = tmp_path / "fake.toml"  # the stand-ins are this process's own
    models.write_text('[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n')
    writer = write_into(fifo, JSONL)
    command = ["evaluate", str(fifo), "-m", "bleu", "--no-progress", "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "localeval.cli", *command],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT), "LOCALEVAL_MODELS": str(models)},
    )
    writer.join(5)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"Loaded 3 samples from {fifo}; metrics: bleu\n"
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["run"]["dataset"] == str(fifo)
    assert len(results["samples"]) == 3
    # the library, which cannot copy it, refuses a pipe rather than wait forever
    from localeval.evaluation.requests import EvaluationRequest
    from localeval.evaluation.scoring import ScoringRun

    with pytest.raises(UsageError) as refused:
        ScoringRun(EvaluationRequest(fifo, ["bleu"]))
    assert str(refused.value) == (
        f"{fifo} is a pipe, which can be read only once, and an evaluation reads its data "
        "more than once; write it to a file first"
    )


def test_a_bad_row_in_a_minified_array_is_named_by_its_number(tmp_path: Path, data: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps([*ROWS, {"question": 3}], separators=(",", ":")), encoding="utf-8")
    result = run("evaluate", path, "-m", "bleu")
    assert result.stderr == (
        f"Error: {path}, row 4 (line 1), field 'question': must be a string, got a number\n"
    )
    path.write_text(json.dumps([*ROWS, *ROWS]), encoding="utf-8")
    assert run("evaluate", path, "-m", "bleu").stderr == (
        f"Error: {path}, row 4 (line 1), field 'sample_id': duplicate sample_id 's0' (first in "
        "row 1)\n"
    )


def test_gzip_compressed_data(tmp_path: Path, data: Path) -> None:
    packed = tmp_path / "d.jsonl.gz"
    packed.write_bytes(gzip.compress(JSONL.encode()))
    result = run("evaluate", packed, "-m", "bleu", "--no-progress")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"Loaded 3 samples from {packed}; metrics: bleu\n"
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(json.dumps(ROWS).encode())[:-12])
    broken = run("evaluate", cut, "-m", "bleu")
    assert broken.exit_code == 2
    assert broken.stderr.startswith(f"Error: {cut}: is not a complete gzip file (")


def test_a_foreign_sqlite_file_is_left_alone(tmp_path: Path, data: Path) -> None:
    foreign = tmp_path / "crm.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE customers (name TEXT)")
    before = foreign.read_bytes()
    expected = (
        f"Error: database {foreign}: not a localeval database (it holds other tables: "
        "customers); it is left as it is. Give another --db\n"
    )
    for args in (["evaluate", data, "-m", "bleu"], ["runs", "list"], ["cache", "stats"]):
        result = run(*args, "--db", foreign)
        assert (result.exit_code, result.stderr) == (2, expected), args
    assert foreign.read_bytes() == before


def test_a_damaged_database_is_not_said_to_be_intact(tmp_path: Path, data: Path) -> None:
    """Its pages past the first overwritten (its header still reads): the error says the file
    is damaged, never that the runs stored in it are intact."""
    db = tmp_path / "runs.db"
    assert run("evaluate", data, "-m", "bleu", "--db", db).exit_code == 0
    page = 4096
    with db.open("r+b") as handle:
        handle.seek(page)
        handle.write(b"\xff" * (db.stat().st_size - page))
    result = run("runs", "list", "--db", db)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: database {db}: database disk image is malformed; the file "
        "is damaged or was overwritten: use --db PATH to put the database elsewhere\n",
    )


@pytest.mark.both_stores
def test_runs_delete_and_prune(tmp_path: Path, data: Path, db: Location) -> None:
    for _ in range(4):
        assert run("evaluate", data, "-m", "bleu", "--no-progress").exit_code == 0
    ids = [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]]
    assert len(ids) == 4
    refused = run("runs", "delete", ids[0], "nope", "--yes")
    assert refused.exit_code == 2 and "no run 'nope'" in refused.stderr
    assert len(run("runs", "list").stdout.splitlines()) == 5  # a typo deletes nothing
    asked = run("runs", "delete", ids[0], input="n\n")
    assert asked.exit_code == 1 and len(run("runs", "list").stdout.splitlines()) == 5
    deleted = run("runs", "delete", ids[0], "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout.splitlines()[-1].startswith(
        f"Deleted 1 run; {db}: " if isinstance(db, Path) else f"Deleted 1 run; {db}"
    )
    pruned = run("runs", "prune", "--keep", "1", "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stdout.splitlines()[-1].startswith("Deleted 2 runs; ")
    assert [line.split()[0] for line in run("runs", "list").stdout.splitlines()[1:]] == [ids[1]]
    ((left,),) = query(db, "SELECT count(*) FROM run_samples")
    assert left == 3  # the samples and scores of deleted runs went with them
    assert run("runs", "prune", "--keep", "-1").exit_code == 2


def read_only(folder: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` run where `folder` cannot be written: made read-only by its mode for a user,
    and for root (whom modes do not bind) mounted read-only in a namespace of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if os.geteuid() != 0:
        for path in folder.iterdir():
            path.chmod(0o444)
        folder.chmod(0o555)
        try:
            return subprocess.run(command, env=env, capture_output=True, text=True)
        finally:
            folder.chmod(0o755)
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to mount a read-only folder as root")
    script = (
        f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && exec "$@"'
    )
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no user and mount namespaces here")
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", *command],
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_history_that_cannot_be_written_is_still_read(tmp_path: Path, data: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    db = folder / "runs.db"
    assert run("evaluate", data, "-m", "bleu", "--db", db, "--no-progress").exit_code == 0
    cli = [sys.executable, "-m", "localeval.cli"]
    listed = read_only(folder, [*cli, "runs", "list", "--db", str(db)])
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].endswith(f"  {data}")
    shown = read_only(folder, [*cli, "runs", "show", "latest", "--db", str(db)])
    assert shown.returncode == 0, shown.stderr
    assert "metrics:        bleu" in shown.stdout
    report = read_only(folder, [*cli, "report", "latest", "-f", "md", "--db", str(db)])
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("### ")
    assert sorted(p.name for p in folder.iterdir()) == ["runs.db"]
