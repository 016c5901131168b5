"""Make the bundle that scripts/setup.sh --offline installs from, where the index can be reached.

One folder (or one .tar when OUT ends in .tar; its parts stay in OUT's name less ".tar" plus
".parts" for the next run) holding the locked wheels for the target, llama-cpp-python's sdist
and its build requirements, localeval's wheel and sources, examples/, the models of
models.toml, and MANIFEST.json: each file's size and sha256, the platform, the Python, and
localeval's version and commit. Files already present with the locked sha256 are kept.

Usage: scripts/bundle.sh OUT [--platform linux-x86_64|linux-aarch64|macos-arm64]
       [--python 3.11|3.12] [--gpu] [--models a,b] [--with-tests]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provision_models

import locks
from localeval.backends.model_files import sha256_file

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "MANIFEST.json"
LLAMA = "llama-cpp-python"


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
        check=True,
    )


def target_options(platform_name: str, python: str) -> list[str]:
    """pip download's options for wheels of another platform and Python."""
    tags = [f"--platform={tag}" for tag in locks.PIP_PLATFORM_TAGS[platform_name]]
    digits = python.replace(".", "")
    abis = ["--abi=cp" + digits, "--abi=abi3", "--abi=none"]
    return [*tags, f"--python-version={python}", "--implementation=cp", *abis]


def download_locked(lock: Path, wheels: Path, platform_name: str, python: str) -> None:
    """The lock's packages (llama-cpp-python's sdist apart) for the target, hash-checked."""
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp, "requirements.txt")
        requirements.write_text(locks.without(lock, {LLAMA}), encoding="utf-8")
        pip("download", "--no-deps", "--require-hashes", "-d", str(wheels),
            *target_options(platform_name, python), "-r", str(requirements))  # fmt: skip
        sdist = Path(tmp, "llama.txt")
        sdist.write_text(locks.read_pins(lock)[LLAMA].text, encoding="utf-8")
        pip("download", "--no-deps", "--require-hashes", "--no-binary=:all:", "-d", str(wheels),
            "-r", str(sdist))  # fmt: skip


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def add_sources(out: Path) -> str:
    """localeval's committed sources as a tar and as a wheel, and its examples; the commit."""
    commit = git("rev-parse", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        print("bundle: warning: uncommitted changes are not in the bundle", file=sys.stderr)
    source = out / "localeval-src.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(source), commit], check=True
    )
    for old in (out / "wheels").glob("localeval-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(source) as archive:
            archive.extractall(tmp, filter="data")
        pip("wheel", "--no-deps", "-w", str(out / "wheels"), tmp)
        shutil.rmtree(out / "examples", ignore_errors=True)
        shutil.copytree(Path(tmp, "examples"), out / "examples")
    return commit


def add_models(out: Path, models_file: Path, names: set[str] | None) -> list[str]:
    """The chosen models of models.toml, provisioned here as setup does, copied into
    out/models/ under their path relative to models.toml."""
    entries = provision_models.entries(models_file)
    chosen = [e for e in entries if names is None or e[1].name in names]
    unknown = (names or set()) - {e[1].name for e in entries}
    if unknown:
        raise SystemExit(f"bundle: no model {', '.join(sorted(unknown))} in {models_file}")
    base = models_file.resolve().parent
    keep = {out / "models" / bundle_path(model.path, base) for _, model, _ in chosen}
    drop_others(out / "models", keep)
    for role, model, recipe in chosen:
        if recipe is not None:
            provision = provision_models.provision_judge
            if role == "embedders":
                provision = provision_models.provision_embedder
            provision(model, recipe)
        provision_models.require_present(role, model)
        where = out / "models" / bundle_path(model.path, base)
        if model.path.is_dir():
            shutil.rmtree(where, ignore_errors=True)
            shutil.copytree(model.path, where)
        elif not (where.is_file() and sha256_file(where) == model.sha256):
            where.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(model.path, where)
    shutil.copyfile(models_file, out / "models.toml")
    return [model.name for _, model, _ in chosen]


def drop_others(folder: Path, keep: set[Path]) -> None:
    """Remove what an earlier run with other --models left in the bundle's models folder."""
    for path in sorted(folder.rglob("*"), reverse=True) if folder.is_dir() else []:
        inside = any(path == k or k in path.parents or path in k.parents for k in keep)
        if not inside:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def bundle_path(path: Path, base: Path) -> Path:
    """Where a model goes in the bundle: its path under models.toml's folder, or (a user's
    file elsewhere) under external/ with its absolute path."""
    try:
        return path.relative_to(base)
    except ValueError:
        return Path("external", *path.parts[1:])


def manifest(out: Path, facts: dict[str, object]) -> dict[str, object]:
    files = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.name != MANIFEST):
        files[path.relative_to(out).as_posix()] = {
            "size": path.stat().st_size,
            "sha256": sha256_file(path),
        }
    return {**facts, "files": files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--platform", choices=locks.PLATFORMS, default=locks.this_platform())
    parser.add_argument(
        "--python", choices=locks.PYTHONS, default=f"{sys.version_info[0]}.{sys.version_info[1]}"
    )
    parser.add_argument("--gpu", action="store_true", help="torch's CUDA build (Linux)")
    parser.add_argument("--models", help="a subset of models.toml's models, comma-separated")
    parser.add_argument("--with-tests", action="store_true")
    args = parser.parse_args()
    target = locks.target(args.platform, args.python, args.gpu)
    lock = locks.LOCKS / target / ("test.txt" if args.with_tests else "base.txt")
    if not lock.is_file():
        raise SystemExit(f"bundle: no lock for {target} in locks/ (see scripts/lock.sh)")
    as_tar = args.out.suffix == ".tar"
    out = args.out.with_suffix(".parts") if as_tar else args.out
    (out / "wheels").mkdir(parents=True, exist_ok=True)
    (out / "locks").mkdir(exist_ok=True)
    print(f"bundle: {target} into {args.out}")
    download_locked(lock, out / "wheels", args.platform, args.python)
    build = locks.LOCKS / target / "build.txt"
    pip("download", "--no-deps", "--require-hashes", "-d", str(out / "wheels"),
        *target_options(args.platform, args.python), "-r", str(build))  # fmt: skip
    shutil.copyfile(lock, out / "locks" / "requirements.txt")
    shutil.copyfile(build, out / "locks" / "build.txt")
    commit = add_sources(out)
    names = set(args.models.split(",")) if args.models else None
    models = add_models(out, provision_models.DEFAULT_MODELS, names)
    facts = {
        "platform": args.platform,
        "python": args.python,
        "gpu": args.gpu,
        "localeval_version": provision_models.project_version(),
        "commit": commit,
        "lock": f"{target}/{lock.name}",
        "models": models,
        "with_tests": args.with_tests,
    }
    (out / MANIFEST).write_text(json.dumps(manifest(out, facts), indent=1) + "\n")
    if as_tar:
        partial = args.out.with_name(args.out.name + ".partial")
        with tarfile.open(partial, "w") as archive:
            archive.add(out / MANIFEST, arcname=MANIFEST)  # first: read before the rest
            for path in sorted(p for p in out.iterdir() if p.name != MANIFEST):
                archive.add(path, arcname=path.name)
        partial.replace(args.out)
    size = (
        sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
        if not as_tar
        else (args.out.stat().st_size)
    )
    print(f"bundle: done: {args.out} ({size / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
