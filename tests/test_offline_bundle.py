"""The air-gapped install, for real: scripts/bundle.sh makes a bundle with the smallest models,
scripts/setup.sh --offline installs it into a fresh folder inside a network namespace with no
network at all, and the demo is evaluated there with the small judge. A bundle with one byte
changed in one wheel is refused before anything is installed.

The bundle's wheels come from where this machine's pip finds them (its index, find-links and
cache); llama.cpp is compiled by scripts/llama_build.py, which reuses the verified wheel that
scripts/setup.sh built for this CPU, if any (else it compiles the bundled sdist: minutes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JUDGE, EMBEDDER = "smollm2-135m", "all-minilm-l6-v2"
pytestmark = pytest.mark.offline_bundle


def no_network_prefix() -> list[str]:
    """`unshare -n` (as root) or `unshare -rn` (a user namespace); skip, saying why, where the
    kernel allows neither."""
    tried = []
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        if shutil.which(prefix[0]) is None:
            pytest.skip("no unshare program: cannot run without network here")
        done = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return prefix
        tried.append(f"{' '.join(prefix)}: {done.stderr.strip() or done.returncode}")
    reason = "the kernel refuses a network namespace (" + "; ".join(tried) + ")"
    print(reason)
    pytest.skip(reason)


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def tampered_copy(parts: Path, into: Path) -> Path:
    """The bundle folder again (files linked, not copied), with one byte of one wheel changed."""
    shutil.copytree(parts, into, copy_function=os.link)
    wheel = sorted((into / "wheels").glob("click-*.whl"))[0]
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 1
    wheel.unlink()  # a new file: the original bundle keeps its bytes
    wheel.write_bytes(bytes(data))
    return into


def test_bundle_installs_and_evaluates_with_no_network(tmp_path: Path) -> None:
    offline = no_network_prefix()
    bundle = tmp_path / "bundle.tar"
    made = run(["scripts/bundle.sh", str(bundle), "--models", f"{JUDGE},{EMBEDDER}"], ROOT)
    assert made.returncode == 0, made.stdout + made.stderr
    assert made.stdout.splitlines()[-1].startswith(f"bundle: done: {bundle} (")
    manifest = json.loads((tmp_path / "bundle.parts" / "MANIFEST.json").read_text())
    assert manifest["models"] == [JUDGE, EMBEDDER]

    target = tmp_path / "target"
    target.mkdir()
    with tarfile.open(tmp_path / "bundle.parts" / "localeval-src.tar") as source:
        source.extractall(target, filter="data")

    bad = tampered_copy(tmp_path / "bundle.parts", tmp_path / "bad")
    refused = run([*offline, "scripts/setup.sh", "--offline", str(bad)], target)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "differs from the manifest (sha256 mismatch); nothing was installed" in refused.stderr
    assert not (target / ".venv").exists()

    # what an interrupted earlier try leaves: a .venv without the completion marker
    (target / ".venv" / "bin").mkdir(parents=True)
    installed = run([*offline, "scripts/setup.sh", "--offline", str(bundle)], target)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "setup: removing the incomplete .venv of an earlier try" in installed.stdout
    assert installed.stdout.splitlines()[-1] == "setup: done"
    assert not (target / ".localeval-bundle").exists()

    results = target / "results.json"
    evaluate = [".venv/bin/localeval", "evaluate", "examples/demo.jsonl", "--judge", JUDGE]
    scored = run([*offline, *evaluate, "--output", str(results)], target)
    # 1: the small judge fails the quality gates, as it should; the run itself completes
    assert scored.returncode in (0, 1), scored.stdout + scored.stderr
    report = json.loads(results.read_text())
    assert report["run"]["judge"]["name"] == JUDGE
    assert report["summary"]["faithfulness"]["n"] > 0

    again = run([*offline, "scripts/setup.sh", "--offline", str(bundle)], target)
    assert again.returncode == 0
    assert "setup: already installed from this bundle" in again.stdout
