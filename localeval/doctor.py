"""Whether this install can evaluate here, with no network: `localeval doctor`.

Each check says what it found and, where it fails, what to do. It covers the models of
models.toml (present, their sha256), the llama.cpp build (proven on this CPU by a tiny real
decode in a fresh process: localeval.backends.llama_proof), the default embedder (loaded
with the Hugging Face libraries held offline, one sentence embedded), the folders localeval
writes (the user's cache folder, the run history's folder) and the run history's store
(reachable). Nothing is created or changed: a folder that does not exist yet counts as
writable where the nearest folder above it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from localeval.backends import embedder_backend, judge_backend
from localeval.backends.llama_proof import verify
from localeval.backends.model_files import user_cache_folder
from localeval.config import ModelsConfig, load_models_config
from localeval.database import Location, default_db_path, store_exists, store_file
from localeval.errors import LocalevalError, param, rendered
from localeval.offline import hold_offline

#: the backend whose build this install compiles for its CPU
LLAMA_CPP = "llama-cpp"
SETUP = "run scripts/setup.sh (or scripts/setup.sh --offline BUNDLE where there is no network)"


@dataclass(frozen=True)
class Check:
    """One thing an evaluation needs here: whether it holds, what was found, and what to
    do where it does not."""

    name: str
    ok: bool
    found: str
    remedy: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """Every check, in the order a user reads them."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [check for check in self.checks if not check.ok]


def diagnose(models: str | os.PathLike[str] | None = None, db: Location | None = None) -> Diagnosis:
    """Check this install: `models` as the command line finds models.toml, `db` the run
    history (default as the command line's). A models.toml that cannot be read is itself a
    failed check; nothing here raises for what it finds."""
    try:
        config = load_models_config(None if models is None else str(models))
    except LocalevalError as error:
        fix = rendered(f"fix or name another with {param('models')}")
        found = [Check("models.toml", False, str(error), fix)]
        return Diagnosis((*found, *_folders(db), _store(db)))
    checks = [
        Check("models.toml", True, str(config.source)),
        *_model_files(config),
        _llama_build(config),
        _embedder(config),
        *_folders(db),
        _store(db),
    ]
    return Diagnosis(tuple(checks))


def _model_files(config: ModelsConfig) -> Iterator[Check]:
    """Each judge and embedder file: present and, where models.toml pins it, its sha256."""
    for name, judge in config.judges.items():
        status = judge_backend(judge.backend).status(judge.settings)
        yield _model_check(f"judge {name}", status.problem, status.location)
    for name, embedder in config.embedders.items():
        status = embedder_backend(embedder.backend).status(embedder.settings)
        yield _model_check(f"embedder {name}", status.problem, status.location)


def _model_check(name: str, problem: str | None, location: str) -> Check:
    if problem is None:
        return Check(name, True, f"{location} (sha256 as models.toml says, where it pins one)")
    return Check(name, False, f"{location}: {problem}", SETUP)


def _llama_build(config: ModelsConfig) -> Check:
    """The installed llama.cpp, proven on this CPU with the smallest judge file present."""
    present = [
        Path(judge_backend(judge.backend).status(judge.settings).location)
        for judge in config.judges.values()
        if judge.backend == LLAMA_CPP
    ]
    files = [path for path in present if path.is_file()]
    if not present:
        return Check("llama.cpp build", True, "no judge of models.toml runs on llama.cpp here")
    if not files:
        return Check("llama.cpp build", False, "no judge file to prove the build with", SETUP)
    smallest = min(files, key=lambda path: path.stat().st_size)
    verdict = verify(sys.executable, smallest, timeout=300)
    if verdict.ok:
        return Check("llama.cpp build", True, f"{verdict.what}, with {smallest.name}")
    return Check(
        "llama.cpp build",
        False,
        f"the installed llama-cpp-python {verdict.what}",
        "run scripts/setup.sh again: it builds llama.cpp for this CPU",
    )


def _embedder(config: ModelsConfig) -> Check:
    """The default embedder, loaded with the Hugging Face libraries held offline."""
    name = config.default_embedder
    entry = config.embedders.get(name)
    if entry is None:
        return Check(f"embedder {name} loads", False, "not in models.toml", "add its entry")
    hold_offline()
    try:
        embedder = embedder_backend(entry.backend).load(name, entry.settings)
        width = len(embedder.embed(["Is the evaluator ready?"])[0])
    except Exception as error:  # a model that cannot load offline fails in many ways
        return Check(
            f"embedder {name} loads",
            False,
            f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}",
            f"{SETUP}; a model of your own must be a local folder (models.toml path)",
        )
    return Check(f"embedder {name} loads", True, f"offline, vectors of {width} numbers")


def _folders(db: Location | None) -> list[Check]:
    """The user's cache folder (context states, speeds) and the history's folder."""
    checks = []
    cache = user_cache_folder()
    if cache is None:
        checks.append(Check("cache folder", False, "no home folder", "set XDG_CACHE_HOME"))
    else:
        checks.append(_writable("cache folder", cache))
    history = store_file(db or default_db_path())
    if history is not None:
        checks.append(_writable("run history folder", history.resolve().parent))
    return checks


def _writable(name: str, folder: Path) -> Check:
    existing = next((f for f in (folder, *folder.parents) if f.exists()), Path("/"))
    if not existing.is_dir():
        return Check(name, False, f"{folder}: {existing} is not a folder", "give another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        return Check(name, False, f"{folder}: {existing} cannot be written", "fix its rights")
    said = "" if existing == folder else f" (made at first use, in {existing})"
    return Check(name, True, f"{folder} is writable{said}")


def _store(db: Location | None) -> Check:
    """The run history's store: an SQLite file (made at the first evaluate) or a server."""
    where = db or default_db_path()
    try:
        exists = store_exists(where)
    except LocalevalError as error:
        return Check(
            "run history", False, str(error), rendered(f"check {param('db')} or $LOCALEVAL_DB")
        )
    if exists:
        return Check("run history", True, f"{where}: reachable")
    return Check("run history", True, f"{where}: none yet (the first evaluate makes it)")
