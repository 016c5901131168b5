"""scripts/setup.sh --offline refuses a bundle that does not match, before changing anything:
another platform or Python, a missing file, a file whose sha256 differs, a file the manifest
does not list, too little disk. Each is one line and exit status 2, and no .venv appears."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import offline_setup  # noqa: E402

import locks  # noqa: E402

HERE_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def make_bundle(folder: Path, **facts: Any) -> Path:
    """A bundle folder with two small files and their manifest (the facts overridable)."""
    files = {"wheels/a-1.0-py3-none-any.whl": b"wheel a", "models/m.gguf": b"GGUF model"}
    listed = {}
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        listed[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"platform": locks.this_platform(), "python": HERE_PYTHON, "commit": "c0ffee"}
    manifest.update(facts, files=listed)
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    return folder


def checkout(tmp_path: Path) -> Path:
    """A checkout of the scripts the offline set-up runs, where it would create .venv."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "offline_setup.py", "locks.py"):
        shutil.copy2(ROOT / "scripts" / name, root / "scripts" / name)
    return root


def run_offline_setup(root: Path, bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / "scripts" / "setup.sh"), "--offline", str(bundle)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
        check=False,
    )


def assert_refused(root: Path, bundle: Path, why: str) -> None:
    done = run_offline_setup(root, bundle)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [f"setup: refused: {why}; nothing was installed"]
    assert not (root / ".venv").exists()
    assert not (root / ".localeval-bundle").exists()


def test_another_platform_or_python_is_refused(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    other = "macos-arm64" if locks.this_platform() != "macos-arm64" else "linux-x86_64"
    bundle = make_bundle(tmp_path / "b1", platform=other)
    assert_refused(
        root, bundle, f"the bundle is for {other}, this machine is {locks.this_platform()}"
    )
    bundle = make_bundle(tmp_path / "b2", python="3.9")
    assert_refused(root, bundle, f"the bundle is for Python 3.9, python3 here is {HERE_PYTHON}")


def test_a_changed_missing_or_unlisted_file_is_refused(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    bundle = make_bundle(tmp_path / "b")
    wheel = bundle / "wheels" / "a-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel b")  # one byte changed
    assert_refused(
        root, bundle, "wheels/a-1.0-py3-none-any.whl differs from the manifest (sha256 mismatch)"
    )
    wheel.unlink()
    assert_refused(
        root, bundle, "wheels/a-1.0-py3-none-any.whl is missing from the bundle (1 files missing)"
    )
    wheel.write_bytes(b"wheel a")
    (bundle / "wheels" / "extra.whl").write_bytes(b"x")
    assert_refused(root, bundle, "wheels/extra.whl is in the bundle but not in its manifest")


def test_a_changed_file_in_a_tar_is_refused_without_unpacking(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    bundle = make_bundle(tmp_path / "b")
    (bundle / "models" / "m.gguf").write_bytes(b"GGUF modem")
    tar = tmp_path / "b.tar"
    with tarfile.open(tar, "w") as archive:
        archive.add(bundle / "MANIFEST.json", arcname="MANIFEST.json")
        for part in ("wheels", "models"):
            archive.add(bundle / part, arcname=part)
    assert_refused(root, tar, "models/m.gguf differs from the manifest (sha256 mismatch)")


def test_not_a_bundle_is_refused(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    assert_refused(root, tmp_path / "nothing", f"no bundle at {tmp_path / 'nothing'}")


def test_too_little_disk_is_refused(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "b")
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    free = shutil.disk_usage(offline_setup.ROOT).free
    manifest["files"]["models/m.gguf"]["size"] = free  # more than fits beside the rest
    with pytest.raises(offline_setup.Refused, match=r"^too little free disk: .* GB needed"):
        offline_setup.check_disk(bundle, manifest)
    manifest["files"]["models/m.gguf"]["size"] = 10
    offline_setup.check_disk(bundle, manifest)
