"""Model backends by name: what runs a judge or an embedder, selected in models.toml.

A judge's or embedder's models.toml entry names its backend (`backend = "llama-cpp"`, the
default for judges; `"sentence-transformers"` for embedders). A backend reads its own
settings from the entry, says which model they name (`identify`, before anything is
loaded: the run and the cache key on it) and loads the model.

Backends are entries of the entry-point groups `localeval.judge_backends` and
`localeval.embedder_backends` (localeval.extensions): an installed package declares its
own there, and localeval's own are entries of the same groups (`BUILT_IN`: the module
localeval.backends.NAME, dashes as underscores, with `JUDGE_BACKEND` and/or
`EMBEDDER_BACKEND`). `register_judge_backend` / `register_embedder_backend` add one in
code (a test's stand-in), over any other of that name. This module imports only the
standard library: the provisioning script uses localeval.backends.model_files before anything
else is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from localeval import extensions
from localeval.errors import ConfigError

if TYPE_CHECKING:  # the protocols only: importing them would import numpy
    from localeval.embedder import Embedder  # noqa: F401 (named in JudgeBackend's alias)
    from localeval.judge import Judge, JudgeSpeed, ModelIdentity

DEFAULT_JUDGE_BACKEND = "llama-cpp"
DEFAULT_EMBEDDER_BACKEND = "sentence-transformers"

M = TypeVar("M", covariant=True)


@dataclass(frozen=True)
class ModelStatus:
    """What `localeval models` says about an entry: its problem (None when usable), where
    the model is, and a note on how it runs."""

    problem: str | None
    location: str
    note: str


class Backend(Protocol[M]):
    """One way of running a judge (M = Judge) or an embedder (M = Embedder)."""

    #: the models.toml keys it reads, besides `backend` and the entry's common keys
    keys: frozenset[str]
    #: whether its answers may be kept in the cache: true for a costly model whose answer
    #: depends on the prompt alone
    cacheable: bool

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> Any:
        """The entry's settings, checked (ConfigError naming `where`); relative paths
        against `base`. The value must be hashable: models are shared by their settings."""
        ...

    def identify(self, name: str, settings: Any) -> ModelIdentity:
        """Which model the settings name, checked without loading it (ModelFileError)."""
        ...

    def load(self, name: str, settings: Any) -> M:
        """The model, ready to use."""
        ...

    def status(self, settings: Any) -> ModelStatus:
        """For `localeval models`: whether the model is there and usable."""
        ...


@runtime_checkable
class CountingBackend(Protocol):
    """A judge backend that can estimate a run: a stand-in judge that counts what each call
    would cost, without loading the model (`evaluate --estimate`)."""

    def counter(self, name: str, settings: Any) -> Judge:
        """The counting stand-in for the entry's judge."""
        ...


@runtime_checkable
class MeasuringBackend(Protocol):
    """A judge backend that can time its judge on this machine (kept per machine)."""

    def measure(self, name: str, settings: Any) -> JudgeSpeed:
        """The judge's speed here, measured now."""
        ...


@runtime_checkable
class ConcurrentSettings(Protocol):
    """An entry's settings that allow samples in flight (a server judge's `concurrency`)."""

    concurrency: int


@runtime_checkable
class ThreadedSettings(Protocol):
    """An entry's settings that say how many threads it runs with (0: all cores)."""

    threads: int


JudgeBackend = Backend["Judge"]
EmbedderBackend = Backend["Embedder"]

_REGISTERED: dict[str, dict[str, Any]] = {"judge": {}, "embedder": {}}
_ATTRIBUTE = {"judge": "JUDGE_BACKEND", "embedder": "EMBEDDER_BACKEND"}
GROUPS = {"judge": extensions.JUDGE_BACKENDS, "embedder": extensions.EMBEDDER_BACKENDS}
#: localeval's own backends, entries of the same groups as a plugin's
BUILT_IN = {
    "judge": {
        "llama-cpp": "localeval.backends.llama_cpp:JUDGE_BACKEND",
        "openai": "localeval.backends.openai:JUDGE_BACKEND",
        "fake": "localeval.backends.fake:JUDGE_BACKEND",
    },
    "embedder": {
        "sentence-transformers": "localeval.backends.sentence_transformers:EMBEDDER_BACKEND",
        "fake": "localeval.backends.fake:EMBEDDER_BACKEND",
    },
}


def register_judge_backend(name: str, backend: JudgeBackend) -> None:
    """Make `backend = "name"` in a judge's entry use `backend` (replacing a built-in)."""
    _REGISTERED["judge"][name] = backend


def register_embedder_backend(name: str, backend: EmbedderBackend) -> None:
    """Make `backend = "name"` in an embedder's entry use `backend`."""
    _REGISTERED["embedder"][name] = backend


def unregister_backend(name: str) -> None:
    """Forget a registered judge and embedder backend of that name (built-ins stay)."""
    for registered in _REGISTERED.values():
        registered.pop(name, None)


def judge_backend(name: str, where: str = "models.toml") -> JudgeBackend:
    """The judge backend called `name`; ConfigError naming `where` if there is none."""
    backend: JudgeBackend = _find("judge", name, where)
    return backend


def embedder_backend(name: str, where: str = "models.toml") -> EmbedderBackend:
    """The embedder backend called `name`; ConfigError naming `where` if there is none."""
    backend: EmbedderBackend = _find("embedder", name, where)
    return backend


def _entries(kind: str) -> dict[str, list[Any]]:
    """The group's entries by name: the built-in one alone under its name (a plugin cannot
    replace it), then the installed packages'."""
    own = extensions.built_in(GROUPS[kind], BUILT_IN[kind])
    plugins = [e for e in extensions.installed(GROUPS[kind]) if e.name not in BUILT_IN[kind]]
    return extensions.by_name([*own, *plugins])


def _find(kind: str, name: str, where: str) -> Any:
    if name in _REGISTERED[kind]:
        return _REGISTERED[kind][name]
    found = _entries(kind).get(name)
    if not found:
        known = ", ".join(sorted(backend_names(kind))) or "none"
        raise ConfigError(f"{where}: unknown {kind} backend '{name}' (known: {known})")
    if len(found) > 1:
        values = ", ".join(sorted(entry.value for entry in found))
        raise ConfigError(
            f"{where}: {kind} backend '{name}' is declared by more than one installed "
            f"package ({values}); uninstall all but one"
        )
    (entry,) = found
    if name in BUILT_IN[kind]:
        # a built-in's library missing is an installation fault, raised as it is
        return entry.load()
    what = f"{kind} backend plugin '{name}' ({entry.value})"
    backend, problem = extensions.load(entry, what)
    if isinstance(backend, ModuleType):  # an entry may name the module that declares it
        backend = getattr(backend, _ATTRIBUTE[kind], None)
        problem = None if backend is not None else f"{what} defines no {_ATTRIBUTE[kind]}"
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return backend


def backend_names(kind: str) -> list[str]:
    """Every judge ("judge") or embedder ("embedder") backend there is (for messages)."""
    return sorted(set(_REGISTERED[kind]) | set(_entries(kind)))


def typed_setting(
    table: Mapping[str, Any], key: str, kind: type, where: str, default: Any = None
) -> Any:
    """`table[key]` (or `default`) if it is of `kind`; ConfigError naming `where` if not."""
    value = table.get(key, default)
    # bool is an int in Python; a setting that wants a number must not accept true/false
    if value is not None and (
        not isinstance(value, kind) or (kind is int and isinstance(value, bool))
    ):
        raise ConfigError(f"{where}: '{key}' must be {kind.__name__}, got {value!r}")
    return value


def counted_setting(
    table: Mapping[str, Any],
    key: str,
    where: str,
    default: int,
    minimum: int,
    meaning: str,
    maximum: int | None = None,
) -> int:
    """An integer setting within its range, checked when models.toml is read: a value
    llama.cpp or torch cannot use would otherwise fail only once the model loads, after the
    run has started. `meaning` says what the number counts, for the message."""
    value: int = typed_setting(table, key, int, where, default)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ConfigError(f"{where}: '{key}' must be {meaning}, {bound}; got {value}")
    return value


def required_path(table: Mapping[str, Any], where: str, base: Path) -> Path:
    """The entry's `path`, resolved against `base`; ConfigError if it is missing."""
    value = typed_setting(table, "path", str, where)
    if value is None:
        raise ConfigError(f"{where}: 'path' is required")
    return (base / value).resolve()
