"""scripts/setup.sh --offline BUNDLE: install localeval here from a bundle of
scripts/bundle.sh, with no network.

Before anything changes, the bundle's MANIFEST.json is checked: the platform and Python are
this machine's, every file is there with its sha256 (a .tar is read through, not unpacked),
and the disk holds what the install unpacks. Any mismatch is one line and exit status 2.
Then: a fresh .venv, the locked wheels installed with --no-index --require-hashes, the
models put in place, llama.cpp compiled for this CPU from the bundled sdist and proven by a
decode (scripts/llama_build.py), localeval's wheel, and last the marker that says the
install is complete: a .venv without it is rebuilt.

Runs with the standard library only (before .venv exists).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locks

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "MANIFEST.json"
DONE = "localeval-offline.json"
#: installed packages take about this many times their wheels' size, and a build of
#: llama.cpp about 1 GB
UNPACK_FACTOR = 3
BUILD_BYTES = 1 << 30


class Refused(Exception):
    """The bundle cannot be installed here: one line saying why."""


def say(text: str) -> None:
    print(f"setup: {text}", flush=True)


def digest(stream: IO[bytes]) -> str:
    sha = hashlib.sha256()
    while block := stream.read(1 << 20):
        sha.update(block)
    return sha.hexdigest()


def members(bundle: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """Each file of a bundle folder or .tar, with a stream of its bytes, in stored order."""
    if bundle.is_dir():
        for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
            with path.open("rb") as stream:
                yield path.relative_to(bundle).as_posix(), stream
        return
    with tarfile.open(bundle) as archive:
        for member in archive:
            stream = archive.extractfile(member) if member.isfile() else None
            if stream is not None:
                yield member.name, stream


def read_manifest(bundle: Path) -> dict[str, Any]:
    if not bundle.exists():
        raise Refused(f"no bundle at {bundle}")
    for name, stream in members(bundle):
        if name == MANIFEST:
            return json.loads(stream.read())
        if not bundle.is_dir():
            break  # bundle.py writes it first
    raise Refused(f"{bundle} has no {MANIFEST} at its start: not a bundle of scripts/bundle.sh")


def check_target(manifest: dict[str, Any], python: str) -> None:
    here = locks.this_platform()
    if manifest["platform"] != here:
        raise Refused(f"the bundle is for {manifest['platform']}, this machine is {here}")
    if manifest["python"] != python:
        raise Refused(f"the bundle is for Python {manifest['python']}, python3 here is {python}")


def check_files(bundle: Path, manifest: dict[str, Any]) -> None:
    listed: dict[str, dict[str, Any]] = manifest["files"]
    seen = set()
    for name, stream in members(bundle):
        if name == MANIFEST:
            continue
        entry = listed.get(name)
        if entry is None:
            raise Refused(f"{name} is in the bundle but not in its manifest")
        if digest(stream) != entry["sha256"]:
            raise Refused(f"{name} differs from the manifest (sha256 mismatch)")
        seen.add(name)
    missing = sorted(set(listed) - seen)
    if missing:
        raise Refused(f"{missing[0]} is missing from the bundle ({len(missing)} files missing)")


def check_disk(bundle: Path, manifest: dict[str, Any]) -> None:
    total = sum(entry["size"] for entry in manifest["files"].values())
    wheels = sum(e["size"] for n, e in manifest["files"].items() if n.startswith("wheels/"))
    need = wheels * UNPACK_FACTOR + (total - wheels) + BUILD_BYTES
    if not bundle.is_dir():
        need += total  # unpacked beside the checkout first
    free = shutil.disk_usage(ROOT).free
    if free < need:
        raise Refused(f"too little free disk: {need / 1e9:.1f} GB needed, {free / 1e9:.1f} GB free")


def manifest_digest(manifest: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()


def offline_env(wheels: Path) -> dict[str, str]:
    """pip (and the builds it runs) sees the bundle's wheels and nothing else: no index, no
    configuration of this machine's that could name one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    return env


def place_models(unpacked: Path) -> None:
    """The bundle's models into the paths models.toml names (external/: absolute paths)."""
    source = unpacked / "models"
    if not source.is_dir():
        return
    for item in sorted(source.rglob("*")):
        if not item.is_file():
            continue
        relative = item.relative_to(source)
        if relative.parts[0] == "external":
            target = Path("/", *relative.parts[1:])
        else:
            target = ROOT / relative
        if target.is_file() and target.stat().st_size == item.stat().st_size:
            continue  # the model's sha256 is checked again below, by the llama.cpp proof
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(item, partial)
        partial.replace(target)


def install(unpacked: Path, python: str, manifest: dict[str, Any]) -> None:
    venv = ROOT / ".venv"
    env = offline_env(unpacked / "wheels")
    if venv.exists():
        say("removing the incomplete .venv of an earlier try")
        shutil.rmtree(venv)
    say("creating .venv")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    vpython = str(venv / "bin" / "python")
    requirements = venv / "localeval-lock.txt"
    lock = unpacked / "locks" / "requirements.txt"
    requirements.write_text(locks.without(lock, {"llama-cpp-python"}), encoding="utf-8")
    say(f"installing the locked packages of {manifest['lock']} (--no-index --require-hashes)")
    pip = [vpython, "-m", "pip", "install", "--quiet", "--no-deps"]
    subprocess.run([*pip, "--require-hashes", "-r", str(requirements)], check=True, env=env)
    say("placing the models")
    place_models(unpacked)
    subprocess.run([vpython, "scripts/llama_build.py"], check=True, env=env, cwd=ROOT)
    (wheel,) = (unpacked / "wheels").glob("localeval-*.whl")
    subprocess.run([*pip, str(wheel)], check=True, env=env)
    if manifest.get("with_tests"):
        keep_sources(unpacked, venv)


def keep_sources(unpacked: Path, venv: Path) -> None:
    """The llama-cpp-python sdist, which the real-server tests build llama-server from, and
    what pip needs to read it (the build requirements), kept where the venv's pip finds them
    with no index (scripts/llama_server_build.py pip-downloads the sdist)."""
    sources = venv / "localeval-sources"
    sources.mkdir(exist_ok=True)
    wanted = {"llama-cpp-python", *locks.read_pins(unpacked / "locks" / "build.txt")}
    for item in (unpacked / "wheels").iterdir():
        if locks.normalise(item.name.split("-")[0]) in wanted:
            shutil.copy2(item, sources / item.name)
    (venv / "pip.conf").write_text(f"[global]\nno-index = true\nfind-links = {sources}\n")


def unpack(bundle: Path) -> Path:
    """A bundle folder as it is; a .tar unpacked beside the checkout's .venv."""
    if bundle.is_dir():
        return bundle
    unpacked = ROOT / ".localeval-bundle"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(bundle) as archive:
        archive.extractall(unpacked, filter="data")
    return unpacked


def main() -> int:
    bundle = Path(sys.argv[1]).resolve()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        manifest = read_manifest(bundle)
        check_target(manifest, python)
        marker = ROOT / ".venv" / DONE
        if marker.is_file() and json.loads(marker.read_text()).get("manifest") == manifest_digest(
            manifest
        ):
            say("already installed from this bundle")
            say("done")
            return 0
        say(f"checking {len(manifest['files'])} files of {bundle.name} against its manifest")
        check_files(bundle, manifest)
        check_disk(bundle, manifest)
    except Refused as why:
        print(f"setup: refused: {why}; nothing was installed", file=sys.stderr)
        return 2
    unpacked = unpack(bundle)
    try:
        install(unpacked, sys.executable, manifest)
    except subprocess.CalledProcessError as failed:
        step = " ".join(str(part) for part in failed.cmd[:4])
        print(
            f"setup: failed: {step} ... exited with {failed.returncode} (its output is above); "
            "the .venv is incomplete and a re-run builds it again",
            file=sys.stderr,
        )
        return 1
    finally:
        if unpacked != bundle:
            shutil.rmtree(unpacked, ignore_errors=True)
    record = {"manifest": manifest_digest(manifest), "commit": manifest["commit"]}
    marker.write_text(json.dumps(record) + "\n")  # last: the install is complete
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
