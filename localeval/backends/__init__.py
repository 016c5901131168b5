"""Model backends by name: what runs a judge or an embedder, selected in models.toml.

A judge's or embedder's models.toml entry names its backend (`backend = "llama-cpp"`, the
default for judges; `"sentence-transformers"` for embedders). A backend reads its own
settings from the entry, says which model they name (`identify`, before anything is
loaded: the run and the cache key on it) and loads the model.

Backend NAME lives in the module localeval.backends.NAME (dashes as underscores), as
`JUDGE_BACKEND` and/or `EMBEDDER_BACKEND`: adding a backend is adding that one module.
`register_judge_backend` / `register_embedder_backend` add one from elsewhere (a plugin,
or a test's stand-in). This module imports only the standard library: the provisioning
script uses localeval.backends.files before anything else is installed.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

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
_NAME = re.compile(r"[a-z][a-z0-9-]*")


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


def _find(kind: str, name: str, where: str) -> Any:
    if name in _REGISTERED[kind]:
        return _REGISTERED[kind][name]
    backend = _built_in(kind, name) if _NAME.fullmatch(name) else None
    if backend is None:
        known = ", ".join(sorted(backend_names(kind))) or "none"
        raise ConfigError(f"{where}: unknown {kind} backend '{name}' (known: {known})")
    return backend


def _built_in(kind: str, name: str) -> Any:
    try:
        module = importlib.import_module(f"{__name__}.{name.replace('-', '_')}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name.replace('-', '_')}":
            raise  # the backend exists but needs a library that is not installed
        return None
    return getattr(module, _ATTRIBUTE[kind], None)


def backend_names(kind: str) -> list[str]:
    """Every judge ("judge") or embedder ("embedder") backend there is (for messages)."""
    names = set(_REGISTERED[kind])
    for module in pkgutil.iter_modules(__path__):
        name = module.name.replace("_", "-")
        if _built_in(kind, name) is not None:
            names.add(name)
    return sorted(names)


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
