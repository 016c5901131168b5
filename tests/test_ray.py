"""`evaluate --ray` on a real Ray cluster (tests/ray_cluster.py: one head on this machine
for the session), with the package's fake judge (models.toml's "fake" backend, which the
actors load as any backend) or a recorded fake of a judge server (tests/server_fakes.py)
where the cache is the point: the same results as one process whatever the number of
actors and the order they finish in, the cache consulted before work goes out, and the
faults: an actor killed mid-sample, the driver interrupted or killed and resumed, a cluster
not there, Ray not installed. tests/test_ray_real.py scores with a real judge."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from click.testing import CliRunner, Result
from ray_cluster import SCORING, RayCluster, actor_processes, free_port
from run_db import db_runs, query, stored_in_unfinished_run
from server_fakes import FakeServer, models_toml

from localeval.cli import main
from localeval.cli.evaluate import Printed
from localeval.cli.exit_codes import exit_code_of
from localeval.config import load_models_config
from localeval.data.samples import Sample, load_samples
from localeval.database import ServerUrl
from localeval.engine import order_metrics, score_sample
from localeval.errors import ModelFileError, UsageError
from localeval.estimate.counting import Estimate, Pricing
from localeval.estimate.division import divide
from localeval.evaluation.ray import driver as cluster_module
from localeval.evaluation.ray import join as cluster_join
from localeval.evaluation.ray.driver import ClusterError, ClusterLost, RayScoring
from localeval.evaluation.ray.join import Connection
from localeval.evaluation.ray.remote import Chosen, WorkerTools
from localeval.evaluation.requests import ClusterPlan, RaySettings
from localeval.history.records import StoredRun
from localeval.judge import Usage
from localeval.metrics import build_metric
from localeval.results.model import SampleResult
from localeval.tools import load_tools

#: the package's fake judge and embedder; each judge call takes `delay` seconds
FAKE = '[judges.j]\nbackend = "fake"\ndelay_s = {delay}\n[embedders.e]\nbackend = "fake"\n'


def write_data(path: Path, n: int) -> Path:
    """Samples of unlike sizes (1 to 5 contexts and statements): their times differ, so
    that actors finish them out of order."""
    rows = []
    for i in range(n):
        size = 1 + (i * 7) % 5
        rows.append(
            {
                "sample_id": f"s{i}",
                "category": "abc"[i % 3],
                "question": f"What colour is box {i}?",
                "contexts": [f"Box {i} is green. It stands in room {k}." for k in range(size)],
                "answer": " ".join(f"Box {i} is green, fact {k}." for k in range(size)),
                "reference_answer": f"Green; room {i % 7}.",
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def use_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delay: float) -> Path:
    models = tmp_path / "fake.toml"
    models.write_text(FAKE.format(delay=delay), encoding="utf-8")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    return models


def evaluate(data: Path, out: Path, *args: str) -> Result:
    out.unlink(missing_ok=True)
    return CliRunner().invoke(main, ["evaluate", str(data), "-o", str(out), *args])


def comparable(results: Path) -> dict[str, Any]:
    """results.json without what differs between two runs of the same evaluation."""
    data = json.loads(results.read_text(encoding="utf-8"))
    for key in ("id", "created"):
        del data["run"][key]
    del data["run"]["usage"]["seconds"]
    return data


def plan_line(cluster: RayCluster, actors: int) -> str:
    return (
        f"Ray: {actors} actor{'s' * (actors != 1)} × 1 thread, Ray cluster at "
        f"{cluster.address} (1 node, 4 CPUs)\n"
    )


@pytest.mark.ray
def test_the_results_of_one_process_whatever_the_number_of_actors(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake(tmp_path, monkeypatch, 0.003)
    data = write_data(tmp_path / "data.jsonl", 24)
    alone = evaluate(data, tmp_path / "alone.json", "--no-progress")
    assert alone.exit_code == 1, alone.output  # the fake's scores fail some gates
    for actors in (1, 3):
        out = tmp_path / f"ray{actors}.json"
        ray = ["--ray", ray_cluster.address, "--ray-actors", str(actors)]
        result = evaluate(data, out, "--progress", *ray)
        assert result.exit_code == 1, result.output
        assert comparable(out) == comparable(tmp_path / "alone.json")
        assert plan_line(ray_cluster, actors) in result.stderr
        # the progress counts the samples finished across the cluster
        assert "Evaluating: 24/24 (100%)" in result.stderr
        assert "Ray: 24 samples scored by the actors, 0 answered here from the cache\n" in (
            result.stderr
        )


def faithfulness_samples(path: Path) -> list[tuple[int, Sample]]:
    return list(enumerate(load_samples(path)))


@pytest.mark.ray
def test_results_come_in_dataset_order_while_actors_finish_out_of_it(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sample's judge calls wait for a file made once later samples came back:
    actors finish out of order by construction, not by the machine's timing."""
    released = tmp_path / "released"
    fake = tmp_path / "held.toml"
    fake.write_text(
        f'[judges.j]\nbackend = "fake"\ndelay_s = 0.01\nhold_word = "Box 0 is"\n'
        f"hold_until = {json.dumps(str(released))}\n"
        '[embedders.e]\nbackend = "fake"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("LOCALEVAL_MODELS", str(fake))
    models = load_models_config(fake)
    metrics = [build_metric(name) for name in order_metrics(["faithfulness", "context_recall"])]
    jobs = faithfulness_samples(write_data(tmp_path / "data.jsonl", 20))
    settings = RaySettings(ray_cluster.address, actors=3)
    scoring = RayScoring(settings, models, metrics, None, None, cache=None)
    scored: list[tuple[int, SampleResult]] = []
    running = threading.Thread(
        target=lambda: scored.extend(
            scoring.run(jobs, lambda s: score_sample(s, metrics, scoring.tools))
        )
    )
    try:
        running.start()
        # readiness: a later sample came back while the first is held
        while scoring.overtaken == 0 and running.is_alive():
            time.sleep(0.05)
        assert scoring.overtaken > 0  # results did come back out of order
        released.touch()
        running.join()
    finally:
        released.touch()
        running.join()
        scoring.close()
    here = load_tools(models, metrics)
    expected = [score_sample(sample, metrics, here) for _, sample in jobs]
    assert [position for position, _ in scored] == list(range(20))
    assert [r.results for _, r in scored] == [r.results for r in expected]
    assert [r.usage.judge_calls for _, r in scored] == [r.usage.judge_calls for r in expected]
    assert (scoring.sent, scoring.answered) == (20, 0)


def completions(server: FakeServer) -> int:
    return len(server.completions())


@pytest.mark.ray
def test_the_cache_answers_before_work_goes_out_and_a_warm_run_sends_nothing(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge server's answers are cached: what the driver's cache holds is never asked
    again, on the cluster as in one process, and the actors' answers reach the cache."""
    data = write_data(tmp_path / "data.jsonl", 12)
    # the second step's faithfulness (asked first) misses, its context recall does not
    steps = (["-m", "context_recall"], ["-m", "faithfulness", "-m", "context_recall"])
    asked: dict[str, list[int]] = {}
    with FakeServer() as server:
        models = tmp_path / "server.toml"
        models.write_text(models_toml(server.url), encoding="utf-8")
        monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
        for where, extra in (("alone", []), ("ray", ["--ray", ray_cluster.address])):
            monkeypatch.setenv("LOCALEVAL_DB", str(tmp_path / f"{where}.db"))
            asked[where] = []
            for number, metrics in enumerate(steps):
                before = completions(server)
                out = tmp_path / f"{where}{number}.json"
                result = evaluate(data, out, "--no-progress", *metrics, *extra)
                assert result.exit_code in (0, 1), result.output  # the gates: compared below
                asked[where].append(completions(server) - before)
        # the second step sends every sample out, with its context recall answers found here
        assert asked["ray"] == asked["alone"] and all(asked["alone"])
        for number in range(len(steps)):
            assert comparable(tmp_path / f"ray{number}.json") == comparable(
                tmp_path / f"alone{number}.json"
            )
        before = completions(server)
        warm = evaluate(data, tmp_path / "warm.json", "--no-progress", *steps[1], *extra)
        assert warm.exit_code == 1, warm.output
        assert completions(server) == before
    assert "Ray: 0 samples scored by the actors, 12 answered here from the cache\n" in warm.stderr
    assert (
        comparable(tmp_path / "warm.json")["samples"]
        == comparable(tmp_path / "alone1.json")["samples"]
    )


@pytest.mark.ray
@pytest.mark.postgres
def test_a_driver_keeps_its_runs_and_cache_on_a_teams_server(
    ray_cluster: RayCluster,
    postgres_database: ServerUrl,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--db postgresql://...: the driver stores the actors' samples and cache entries on the
    server, each once; a re-run there sends nothing out, and the results are one process's."""
    data = write_data(tmp_path / "data.jsonl", 12)
    with FakeServer() as server:
        models = tmp_path / "server.toml"
        models.write_text(models_toml(server.url), encoding="utf-8")
        monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
        alone = evaluate(data, tmp_path / "alone.json", "--no-progress", "-m", "faithfulness")
        ray = ["-m", "faithfulness", "--ray", ray_cluster.address, "--db", postgres_database.url]
        cold = evaluate(data, tmp_path / "cold.json", "--no-progress", *ray)
        assert cold.exit_code == alone.exit_code, cold.output
        assert "Ray: 12 samples scored by the actors, 0 answered here" in cold.stderr
        before = completions(server)
        warm = evaluate(data, tmp_path / "warm.json", "--no-progress", *ray)
        assert warm.exit_code == alone.exit_code, warm.output
        assert completions(server) == before
    assert "Ray: 0 samples scored by the actors, 12 answered here from the cache\n" in warm.stderr
    assert comparable(tmp_path / "cold.json") == comparable(tmp_path / "alone.json")
    assert (
        comparable(tmp_path / "warm.json")["samples"]
        == comparable(tmp_path / "alone.json")["samples"]
    )
    assert [run[:2] for run in db_runs(postgres_database)] == [(12, 12), (12, 12)]
    verdicts = "SELECT count(*), count(DISTINCT key) FROM judge_cache WHERE kind <> 'fits'"
    ((stored, distinct),) = query(postgres_database, verdicts)
    assert 0 < stored == distinct


def command(data: Path, out: Path, cluster: RayCluster, actors: int = 2) -> list[str]:
    cli = [sys.executable, "-m", "localeval.cli", "evaluate", str(data), "-o", str(out)]
    return [*cli, "--no-progress", "--ray", cluster.address, "--ray-actors", str(actors)]


def environment(cluster: RayCluster, db: Path, models: Path) -> dict[str, str]:
    return {**cluster.env, "LOCALEVAL_DB": str(db), "LOCALEVAL_MODELS": str(models)}


def driver(data: Path, out: Path, cluster: RayCluster, env: dict[str, str]) -> Any:
    """`evaluate --ray` in a process of its own (a driver the test can signal)."""
    return subprocess.Popen(command(data, out, cluster), env=env, stderr=subprocess.PIPE, text=True)


def wait_until(condition: Any, process: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@contextmanager
def frozen(processes: list[int]) -> Iterator[None]:
    """The processes stopped (SIGSTOP) for the block, then continued."""
    for pid in processes:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in processes:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def no_actors_left(seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while actor_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not actor_processes()


@pytest.mark.ray
def test_an_actor_killed_mid_sample_is_restarted_and_its_sample_scored_once(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = use_fake(tmp_path, monkeypatch, 0.04)
    data = write_data(tmp_path / "data.jsonl", 24)
    alone = evaluate(data, tmp_path / "alone.json", "--no-progress")
    assert alone.exit_code == 1, alone.output
    db, out = tmp_path / "ray.db", tmp_path / "ray.json"
    process = driver(data, out, ray_cluster, environment(ray_cluster, db, models))
    wait_until(lambda: stored_in_unfinished_run(db) >= 3, process)
    scoring = actor_processes(SCORING)
    assert scoring, "no actor is scoring"
    started = set(actor_processes())
    os.kill(scoring[0], signal.SIGKILL)
    # Ray starts the actor again, in a process of its own
    wait_until(lambda: set(actor_processes()) - started, process)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    assert comparable(out) == comparable(tmp_path / "alone.json")  # the judge's calls too
    assert db_runs(db) == [(24, 24, db_runs(db)[0][2])]  # one run, each sample stored once
    assert "Ray: 24 samples scored by the actors" in stderr


@pytest.mark.ray
def test_a_driver_interrupted_or_killed_resumes_sending_only_what_did_not_finish(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = use_fake(tmp_path, monkeypatch, 0.04)
    data = write_data(tmp_path / "data.jsonl", 30)
    alone = evaluate(data, tmp_path / "alone.json", "--no-progress")
    db, out = tmp_path / "ray.db", tmp_path / "ray.json"
    env = environment(ray_cluster, db, models)
    stops = [(signal.SIGINT, 5, "Interrupted."), (signal.SIGTERM, 10, "Terminated.")]
    for stop, at, said in [*stops, (signal.SIGKILL, 15, "")]:
        before = stored_in_unfinished_run(db)
        process = driver(data, out, ray_cluster, env)
        wait_until(lambda at=at: stored_in_unfinished_run(db) >= at, process)
        # the actors held still until the driver is gone: the run cannot finish before the
        # signal is taken, however slowly the driver gets to it
        actors = actor_processes()
        assert actors, "no actor of this cluster is running"
        with frozen(actors):
            process.send_signal(stop)
            _, stderr = process.communicate(timeout=120)
        kept = stored_in_unfinished_run(db)
        assert 0 < kept < 30
        if before:
            assert f"{before} of 30 samples were scored before it stopped" in stderr
        if stop == signal.SIGKILL:
            assert process.returncode == -signal.SIGKILL
        else:
            # 130 and 143 as without Ray (ray.init's own SIGTERM handler exited with 15,
            # after a stack dump of Ray's C++ core)
            assert process.returncode == 128 + stop, stderr
            # (Ray's C++ core may add a warning line of its own as the driver leaves)
            assert (
                f"saved with {kept} of 30 samples scored; re-run the same command to "
                "continue it.\n" in stderr
            )
            assert stderr.endswith(f"{said}\n") and "SIGTERM received" not in stderr, stderr
        assert no_actors_left(), "the actors outlived their driver"
    final = subprocess.run(
        command(data, out, ray_cluster), env=env, stderr=subprocess.PIPE, text=True
    )
    assert final.returncode == 1, final.stderr
    # only the samples not stored went out
    assert f"Ray: {30 - kept} samples scored by the actors, 0 answered here" in final.stderr
    assert comparable(out) == comparable(tmp_path / "alone.json")
    assert [run[:2] for run in db_runs(db)] == [(30, 30)]
    assert alone.exit_code == 1


@pytest.mark.ray
def test_a_worker_with_another_model_stops_the_run_before_it_scores(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = load_models_config(use_fake(tmp_path, monkeypatch, 0.0))
    metrics = [build_metric("faithfulness")]
    jobs = faithfulness_samples(write_data(tmp_path / "data.jsonl", 4))
    scoring = RayScoring(RaySettings(ray_cluster.address, 1), models, metrics, None, None, None)
    # as if the driver's file were another: the worker's sha256 differs from it
    other = {"judge": {**scoring.job.identities["judge"], "sha256": "e" * 64}}
    scoring.job = type(scoring.job)(**{**vars(scoring.job), "identities": other})
    try:
        with pytest.raises(ClusterError) as raised:
            list(scoring.run(jobs, lambda s: score_sample(s, metrics, scoring.tools)))
    finally:
        scoring.close()
    assert exit_code_of(raised.value) == 2  # a worker's usage error, as on the driver
    assert str(raised.value).startswith("judge 'j' on node ")
    assert str(raised.value).endswith(
        f"has sha256 {'1' * 64}, the driver's {'e' * 64}: a run never mixes models; give "
        "every node the same file at the path models.toml names"
    )


def test_a_worker_checks_each_model_against_the_drivers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = load_models_config(use_fake(tmp_path, monkeypatch, 0.0))
    chosen = Chosen("j", "e")
    theirs = {"judge": {"name": "j", "sha256": "1" * 64}, "embedder": {"name": "e"}}
    with pytest.raises(ModelFileError, match=r"embedder 'e' on here has sha256 f{64}"):
        WorkerTools(models, chosen, 1, True, theirs, "here")
    theirs["embedder"] = {"name": "e", "sha256": "f" * 64}
    assert WorkerTools(models, chosen, 1, True, theirs, "here").tools.judge is not None


@pytest.mark.ray
def test_an_unreachable_cluster_is_one_line_and_exit_2(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Another cluster than the session's: `ray_cluster` only sets this process up for
    Ray, as for every test that imports it.)"""
    use_fake(tmp_path, monkeypatch, 0.0)
    data = write_data(tmp_path / "data.jsonl", 2)
    address = f"127.0.0.1:{free_port()}"
    result = evaluate(data, tmp_path / "out.json", "--no-progress", "--ray", address)
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith(
        f"Error: cannot reach the Ray cluster at {address}: Connection refused\n"
    )
    assert db_runs(tmp_path / "localeval-test.db") == []  # nothing started


def something_else_at_a_port(answer: bytes | None) -> tuple[socket.socket, int]:
    """A listening socket that is not Ray: one that answers each connection with `answer`
    and closes it, as a database does to a stranger, or (None) one that never answers."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed: the test is over
            with connection:
                connection.recv(1024)
                connection.sendall(answer or b"")

    if answer is not None:
        threading.Thread(target=serve, daemon=True).start()
    return listener, int(listener.getsockname()[1])


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (
            b"EFATAL: invalid length of startup packet\0",
            "it does not answer as Ray's gRPC services do",
        ),
        (None, "it did not answer Ray's handshake within 1 s"),
    ],
)
def test_a_port_where_something_else_listens_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: bytes | None, why: str
) -> None:
    """A PostgreSQL port given as the cluster's: Ray itself retried for more than ten
    minutes; the join is refused within its time-out (one second here)."""
    pytest.importorskip("ray")
    use_fake(tmp_path, monkeypatch, 0.0)
    monkeypatch.setattr(cluster_join, "JOIN_TIMEOUT_S", 1.0)
    data = write_data(tmp_path / "data.jsonl", 2)
    listener, port = something_else_at_a_port(answer)
    with listener:
        result = evaluate(data, tmp_path / "out.json", "--ray", f"127.0.0.1:{port}")
    assert result.exit_code == 2, result.output
    assert result.stderr.endswith(
        f"\nError: cannot join the Ray cluster at 127.0.0.1:{port}: what listens there is not "
        f"a Ray cluster's head ({why}); give the address `ray start --head` printed (port "
        "6379 unless set otherwise)\n"
    )
    assert result.stderr.count("\n") == 2  # what was loaded, and the error
    assert db_runs(tmp_path / "localeval-test.db") == []  # nothing started


def test_sigterm_while_joining_is_terminated_not_a_failed_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ray.init takes SIGTERM with a handler of its own (sys.exit(15)), which said "cannot
    join the Ray cluster …: 15" (exit 2): the signal is given back to the process's."""
    ray = pytest.importorskip("ray")
    use_fake(tmp_path, monkeypatch, 0.0)

    def init_taking_sigterm(**_: Any) -> None:
        signal.signal(signal.SIGTERM, lambda number, _: sys.exit(number))  # as ray.init does
        signal.raise_signal(signal.SIGTERM)  # the signal arrives while it joins

    monkeypatch.setattr(ray, "init", init_taking_sigterm)
    monkeypatch.setattr(cluster_join, "check_reachable", lambda address: None)
    data = write_data(tmp_path / "data.jsonl", 2)
    result = evaluate(data, tmp_path / "out.json", "--ray", "127.0.0.1:6379")
    assert result.exit_code == 143, result.output
    assert result.stderr.endswith("\nTerminated.\n")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the command's own is gone too


@pytest.mark.parametrize("where", ["--ray", "RAY_ADDRESS"])
def test_a_ray_client_address_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """ray:// (Ray Client), whose server on the head fails a join at random in Ray 2.60,
    is refused before anything starts, whether given or in RAY_ADDRESS; a closed port
    there shows nothing is tried."""
    pytest.importorskip("ray")
    use_fake(tmp_path, monkeypatch, 0.0)
    data = write_data(tmp_path / "data.jsonl", 2)
    address = f"ray://127.0.0.1:{free_port()}"
    if where == "RAY_ADDRESS":
        monkeypatch.setenv("RAY_ADDRESS", address)
        result = evaluate(data, tmp_path / "out.json", "--ray")
    else:
        result = evaluate(data, tmp_path / "out.json", "--ray", address)
    assert result.exit_code == 2, result.output
    named = f"--ray {address}" if where == "--ray" else f"RAY_ADDRESS={address}"
    assert result.stderr.endswith(
        f"\nError: {named}: Ray Client (ray://) is not supported; give the head's HOST:PORT "
        "(the nodes must reach this machine), or run localeval on the cluster with `ray job "
        "submit` (docs/scale.md)\n"
    )
    assert db_runs(tmp_path / "localeval-test.db") == []


@pytest.mark.ray
def test_an_actor_dead_past_its_restarts_stops_the_run_with_a_status_of_its_own(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not exit 3 (a bug of localeval's): 4, the cluster failed; the run is kept."""
    models = load_models_config(use_fake(tmp_path, monkeypatch, 0.02))
    metrics = [build_metric("faithfulness")]
    jobs = faithfulness_samples(write_data(tmp_path / "data.jsonl", 12))
    monkeypatch.setattr(cluster_module, "RESTARTS", 0)  # the first death is past them
    settings = RaySettings(ray_cluster.address, actors=1)
    scoring = RayScoring(settings, models, metrics, None, None, cache=None)
    try:
        results = scoring.run(jobs, lambda s: score_sample(s, metrics, scoring.tools))
        next(results)
        started = scoring.ray.get(scoring.actors[0].handle.started.remote())
        os.kill(started.pid, signal.SIGKILL)
        with pytest.raises(ClusterLost) as raised:
            list(results)
    finally:
        scoring.close()
    assert exit_code_of(raised.value) == 4
    assert re.match(
        r"a Ray actor died scoring sample s\d+, past the 0 restarts and retries Ray was "
        r"allowed: ",
        str(raised.value),
    )


def test_ray_not_installed_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake(tmp_path, monkeypatch, 0.0)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as without it
    data = write_data(tmp_path / "data.jsonl", 2)
    result = evaluate(data, tmp_path / "out.json", "--ray")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "Error: --ray needs Ray, which is not installed here: pip install 'localeval[ray]'\n"
    )
    alone = evaluate(data, tmp_path / "out.json", "--ray-actors", "2")
    assert alone.exit_code == 2
    assert "--ray-actors applies only with --ray" in alone.stderr


@pytest.mark.ray
def test_the_estimate_says_how_the_actors_divide_the_work(
    ray_cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake(tmp_path, monkeypatch, 0.01)
    data = write_data(tmp_path / "data.jsonl", 10)
    out = tmp_path / "estimate.json"
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster.address)  # a bare --ray joins it
    result = evaluate(data, out, "--estimate", "--ray", "--ray-actors", "4")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert f"On Ray: 4 actors × 1 thread, Ray cluster at {ray_cluster.address}" in text
    assert "samples sent to the actors: 10 (0 answered from the cache or without" in text
    assert re.search(
        r"\n  each actor: \d+ to \d+ samples, \S+ to \S+ with its models' loading\n", text
    )
    division = json.loads(out.read_text())["estimate"]["ray"]
    assert division["actors"] == 4 and sum(division["samples_per_actor"]) == 10
    total = json.loads(out.read_text())["estimate"]["usage"]["seconds"]
    assert total / 4 <= division["seconds"] < total  # shared out, never faster than a quarter


class Nodes:
    """A cluster's nodes as Ray lists them (for the arithmetic of the plan alone)."""

    def __init__(self, *nodes: tuple[int, float]):
        self.listed = [
            {"Alive": True, "Resources": {"CPU": cpus, "memory": memory}} for cpus, memory in nodes
        ]

    def nodes(self) -> list[dict[str, Any]]:
        return self.listed


def plan_of(nodes: Nodes, need: int, actors: int | None = None, threads: int | None = None) -> Any:
    connection = Connection.__new__(Connection)  # joined to nothing: its nodes given
    connection.ray, connection.address = nodes, "here"
    return connection.plan(RaySettings("here", actors, threads), need)


def test_the_default_actors_fill_each_nodes_cpus_and_memory() -> None:
    nodes = Nodes((4, 8e9), (2, 1e9), (3, 64e9))
    plan = plan_of(nodes, need=int(1.7e9))
    # 4 on the first (8 GB holds 4), none on the second (1 GB holds none), 3 on the third
    assert (plan.actors, plan.threads, plan.nodes, plan.cpus) == (7, 1, 3, 9)
    assert plan_of(nodes, need=0).actors == 9
    assert plan_of(nodes, need=0, threads=2).actors == 2 + 1 + 1
    assert plan_of(nodes, need=0, actors=20).actors == 20  # asked for: the rest wait
    with pytest.raises(UsageError, match="ray_threads 5: no node of the cluster has"):
        plan_of(nodes, need=0, threads=5)


def test_the_estimate_is_dealt_to_the_actors_as_the_run_deals_samples() -> None:
    estimate = Estimate(
        n_items=4,
        parts={},
        usage=Usage(),
        loading={"judge": 5.0},
        per_item={"a": 15.0, "b": 10.0, "c": 10.0, "d": 0.0},  # loading counted with a
        judge="j",
        embedder=None,
        pricing=Pricing(),
        timed=True,
        counting_seconds=0.0,
    )
    plan = ClusterPlan("here", actors=2, threads=1, nodes=1, cpus=2)
    division = divide(estimate, plan, threads_here=2)  # each actor's judge half as fast
    assert division.slower == 2.0 and division.here == 1  # d: nothing to ask
    # each actor loads (5 s), then a and c go to the first, b to the second (20 s each)
    assert division.per_actor == [(2, 45.0), (1, 25.0)]
    assert division.seconds == 45.0


def test_the_time_left_is_shared_out_between_the_actors() -> None:
    printed = Printed("data", show_progress=False)
    printed.expected = {"a": 10.0, "b": 30.0}
    printed.cluster_ready(ClusterPlan("here", actors=4, threads=1, nodes=1, cpus=4))
    printed.scoring(cast(StoredRun, SimpleNamespace(n_samples=2, n_done=0)))
    assert printed.progress is not None and printed.progress.expected == 10.0
    printed.scored(cast(SampleResult, SimpleNamespace(sample=Sample("b", "q"))))
    # b's share (30 s / 4) took as long as estimated: a's share is left
    assert printed.progress.done == 1 and printed.progress.left(7.5) == pytest.approx(2.5)
