"""Build llama.cpp's own `llama-server` for this machine, prove it by serving, and cache it.

The real-server tests (tests/llama_server.py) run this with the virtual environment's
Python; it prints the binary's path as its last line of output. It

1. chooses the CMake flags as the wheel build does (scripts/llama_build.py `choose_build`:
   explicit instruction sets from what the CPU reports, AMX off, never -march=native);
2. takes the binary from the cache (one folder per flag set, beside llama-cpp-python's
   wheel cache) if it is there and still serves, else
3. builds it from the llama.cpp sources the llama-cpp-python 0.3.36 sdist vendors
   (`pip download` from the package index; nothing else is fetched: the server's web UI,
   which llama.cpp would download at build time, and TLS are left out), only the
   `llama-server` target, statically linked, with as many jobs as there are cores;
4. proves the build by running it: serves the smallest provisioned GGUF on 127.0.0.1 and
   asks for a greedy completion whose continuation any model is sure of (as the wheel's
   check does in-process), reading its token probabilities too. Only a build that passes
   is cached; a cached binary that fails is thrown away and built again.

Builds are serialised by a lock on the cache folder, so two test sessions at once build once.

Usage: python scripts/llama_server_build.py [--models models.toml] [--plan]
Environment: as scripts/llama_build.py (LOCALEVAL_GPU, CMAKE_ARGS, LOCALEVAL_WHEEL_CACHE).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the wheel build's own module, beside this one
from llama_build import (
    EXPECTED_NEXT,
    PACKAGE,
    ROOT,
    VERSION,
    Build,
    Verdict,
    build_for_this_machine,
    cache_root,
    choose_gpu,
    describe_exit,
    smallest_gguf,
)

BINARY = "llama-server"
RECORD = "llama-server.json"
#: what the server build leaves out, on top of the CPU flags: the web UI (llama.cpp would
#: download it at build time), HTTPS (an intranet judge speaks HTTP; no libssl needed),
#: tests and examples. Static, so that the cached binary needs no library beside it.
SERVER_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
#: the sdist's folder holding llama.cpp's sources
VENDORED = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
VERIFY_PROMPT = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,"


def server_key(build: Build) -> str:
    """Names a llama-server build: the llama.cpp version, the machine and every flag."""
    text = json.dumps(
        [VERSION, BINARY, build.machine, build.gpu, list(build.cmake_args), SERVER_OPTIONS]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def server_cache(build: Build) -> Path:
    return cache_root() / f"{BINARY}-{server_key(build)}"


# -- proving a build by serving ------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(url: str, body: dict[str, object], timeout: float) -> dict[str, object]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return dict(json.loads(reply.read()))


def wait_until_healthy(process: subprocess.Popen[bytes], port: int, timeout: float) -> str | None:
    """None once /health answers 200; else what went wrong, in words."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return "exited before it served"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return None
        except (OSError, urllib.error.HTTPError):
            pass
        time.sleep(0.2)
    return f"hung: not ready after {timeout:.0f} s"


def verify(binary: Path, model: Path, timeout: float = 300) -> Verdict:
    """Serve `model` with `binary` on 127.0.0.1 and ask for a greedy completion."""
    port = free_port()
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-c", "512", "-t", str(min(2, os.cpu_count() or 1)), "--parallel", "1"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            problem = wait_until_healthy(process, port, timeout)
            reply: dict[str, object] = {}
            if problem is None:
                body = {"prompt": VERIFY_PROMPT, "n_predict": 3, "temperature": 0, "n_probs": 5}
                try:
                    reply = _post(f"http://127.0.0.1:{port}/completion", body, timeout)
                except (OSError, ValueError) as exc:
                    problem = f"failed to serve a completion: {exc}"
                    # a crash resets the connection a moment before the process is gone
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.wait(timeout=5)
        finally:
            died = process.poll() is not None  # on its own, not killed by us below
            if not died:
                process.kill()
            process.wait()
            log.seek(0)
            output = log.read().decode("utf-8", "replace")
    if died and process.returncode != 0:  # a crash (SIGILL: a flag this CPU lacks), or a refusal
        return Verdict(False, describe_exit(process.returncode, output))
    if problem:
        return Verdict(False, problem)
    return judge_reply(reply)


def judge_reply(reply: dict[str, object]) -> Verdict:
    """Whether a /completion reply to VERIFY_PROMPT is right: it continues with 18, and
    its token probabilities are finite and not all equal."""
    content = reply.get("content")
    probabilities = reply.get("completion_probabilities")
    try:
        first = probabilities[0]["top_logprobs"]  # type: ignore[index]
        logprobs = [float(t["logprob"]) for t in first]
    except (TypeError, KeyError, IndexError, ValueError):
        return Verdict(False, f"gave no token probabilities: {str(reply)[:200]!r}")
    if not all(math.isfinite(v) for v in logprobs) or len(set(logprobs)) < 2:
        return Verdict(False, "gave wrong output: token probabilities not finite or all equal")
    if not isinstance(content, str) or not content.strip().startswith(EXPECTED_NEXT):
        return Verdict(False, f"gave wrong output: after '... 16, 17,' it continues {content!r}")
    return Verdict(True, "works (served a test completion; probabilities as expected)")


# -- fetching and compiling -----------------------------------------------------------------


def fetch_sources(into: Path) -> Path:
    """llama.cpp's sources from the llama-cpp-python sdist, pip-downloaded into `into`."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--quiet"]
    # the sdist only: its build requirements (which pip installs to read it) may be wheels,
    # as an offline install keeps them (scripts/offline_setup.py)
    subprocess.run(
        [*pip, "--no-deps", "--no-binary", "llama-cpp-python", "-d", str(into), PACKAGE],
        check=True,
    )
    (sdist,) = into.glob(f"llama_cpp_python-{VERSION}.tar.gz")
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(VENDORED)]
        # no path outside `into`, no device files (the filter exists from Python 3.11.4)
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(into, members=members, **safe)  # type: ignore[arg-type]
    sdist.unlink()
    return into / VENDORED


def compile_server(sources: Path, build: Build, into: Path) -> Path:
    """Configure llama.cpp with the build's flags and compile the llama-server target."""
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(sources), "-B", str(into), *generator]
    subprocess.run([*configure, *build.cmake_args, *SERVER_OPTIONS], check=True)
    jobs = str(os.cpu_count() or 1)
    subprocess.run(["cmake", "--build", str(into), "--target", BINARY, "-j", jobs], check=True)
    return into / "bin" / BINARY


# -- the cache --------------------------------------------------------------------------------


@dataclass
class Steps:
    """What `ensure` does to the outside world; tests replace these."""

    fetch_sources: Callable[[Path], Path] = fetch_sources
    compile: Callable[[Path, Build, Path], Path] = compile_server
    verify: Callable[[Path, Path], Verdict] = verify
    say: Callable[[str], None] = lambda text: print(f"llama-server: {text}", file=sys.stderr)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One build per flag set at a time, across processes."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure(build: Build, model: Path, steps: Steps | None = None) -> Path:
    """The path of a llama-server built with `build`'s flags that serves `model`."""
    steps = steps or Steps()
    cache = server_cache(build)
    binary = cache / BINARY
    with locked(cache):
        if binary.is_file():
            verdict = steps.verify(binary, model)
            if verdict.ok:
                steps.say(f"{binary} ({build.description}): {verdict.what}")
                return binary
            steps.say(f"the cached llama-server {verdict.what}; throwing it away and rebuilding")
        shutil.rmtree(cache, ignore_errors=True)
        steps.say(
            f"building llama-server (llama.cpp of llama-cpp-python {VERSION}) for "
            f"{build.description}"
        )
        steps.say(f"CMake flags: {' '.join(build.cmake_args + SERVER_OPTIONS)}")
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="localeval-llama-server-") as tmp:
            sources = steps.fetch_sources(Path(tmp) / "sources")
            steps.say(f"sources fetched in {time.monotonic() - started:.0f} s; compiling")
            built = steps.compile(sources, build, Path(tmp) / "build")
            seconds = time.monotonic() - started
            verdict = steps.verify(built, model)
            if not verdict.ok:
                raise SystemExit(
                    f"llama-server: the build {verdict.what}.\n"
                    f"  flags: {' '.join(build.cmake_args) or '(llama.cpp defaults)'}\n"
                    f"  checked with: {model}\n"
                    "  to try: CMAKE_ARGS with fewer instruction sets (e.g. -DGGML_NATIVE=OFF "
                    "-DGGML_AVX2=OFF -DGGML_AVX512=OFF); LOCALEVAL_GPU=cpu if the GPU build fails"
                )
            cache.mkdir(parents=True)
            partial = cache / f"{BINARY}.partial"
            shutil.copy2(built, partial)
            os.replace(partial, binary)  # never a half-copied binary under its name
        record = {"version": VERSION, "key": server_key(build), "build_seconds": round(seconds)}
        (cache / RECORD).write_text(json.dumps({**record, **asdict(build)}, indent=1) + "\n")
        steps.say(f"built in {seconds:.0f} s; {verdict.what}; cached as {binary}")
        return binary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=str(ROOT / "models.toml"))
    parser.add_argument("--plan", action="store_true", help="print the flags and cache; stop")
    args = parser.parse_args()
    build = build_for_this_machine(choose_gpu(os.environ.get("LOCALEVAL_GPU", "auto")))
    if args.plan:
        print(f"{build.description}\nflags: {' '.join(build.cmake_args + SERVER_OPTIONS)}")
        print(server_cache(build) / BINARY)
        return
    print(ensure(build, smallest_gguf(Path(args.models))))


if __name__ == "__main__":
    main()
