"""The metrics localeval computes, by name.

Every module of this package that declares a `SPEC` (a localeval.metrics.base.MetricSpec)
is a metric: adding one is adding its module. The spec says what the metric needs, its
default gate with likely cause and remedies, how its evidence is explained and shown, and
the options it takes; gates, comparisons, reports and the command line read it from here.
An installed package adds metrics of its own the same way, through an entry point
(localeval.metrics.plugins).
"""

from __future__ import annotations

import functools
import os
import pkgutil
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from localeval import extensions
from localeval.errors import UsageError, param
from localeval.metrics.base import (
    EmbedsByLanguage,
    Metric,
    MetricBase,
    MetricOption,
    MetricResult,
    MetricSpec,
    MetricWithSettings,
    Tools,
    public_settings,
)
from localeval.metrics.plugins import load_plugins

#: per metric, the keyword arguments its class is built with (from its options)
MetricOptions = Mapping[str, Mapping[str, Any]]
_V = TypeVar("_V")


def _discover() -> tuple[dict[str, MetricSpec], dict[str, str]]:
    """Every metric, built-in and installed, and what is wrong with each plugin left out.
    This package's modules are the group's built-in entries; those with a SPEC are metrics."""
    found: list[MetricSpec] = []
    modules = {m.name: f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)}
    for entry in extensions.built_in(extensions.METRICS, modules):
        spec = getattr(entry.load(), "SPEC", None)
        if isinstance(spec, MetricSpec):
            found.append(spec)
    plugins = load_plugins({spec.name for spec in found})
    found += plugins.specs
    found.sort(key=lambda spec: (spec.order, spec.name))
    return {spec.name: spec for spec in found}, plugins.problems


@functools.cache
def _discovered() -> tuple[dict[str, MetricSpec], dict[str, str], list[str]]:
    """The registry, the plugins' problems and the default set, found once, on first use:
    importing localeval (`localeval --help`, the pytest plugin) imports no metric plugin."""
    specs, problems = _discover()
    # the default set, in the order a sample's judge calls share their prompt prefix best:
    # context precision reads the chunks one by one, the next two reuse them
    ranked = sorted(specs.values(), key=lambda spec: spec.default_rank or 0)
    return specs, problems, [spec.name for spec in ranked if spec.default_rank is not None]


class OnFirstUse(MutableMapping[str, _V]):
    """A dict filled by `load` when it is first read, and kept: what the registry holds is
    found when a command needs it, not when localeval is imported."""

    def __init__(self, load: Callable[[], dict[str, _V]]) -> None:
        self._load = load
        self._filled: dict[str, _V] | None = None

    def _data(self) -> dict[str, _V]:
        if self._filled is None:
            self._filled = self._load()
        return self._filled

    def __getitem__(self, key: str) -> _V:
        return self._data()[key]

    def __setitem__(self, key: str, value: _V) -> None:
        self._data()[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return len(self._data())

    def __repr__(self) -> str:
        return repr(self._data())


class _DefaultSet(Sequence[str]):
    """The default metrics' names, found when first read."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return _discovered()[2][index]

    def __len__(self) -> int:
        return len(_discovered()[2])

    def __repr__(self) -> str:
        return repr(tuple(_discovered()[2]))


#: every metric by name, in the order they are listed; PLUGIN_PROBLEMS: by entry point
#: name, why an installed metric plugin is left out (both found on first use)
REGISTRY: MutableMapping[str, MetricSpec] = OnFirstUse(lambda: _discovered()[0])
PLUGIN_PROBLEMS: MutableMapping[str, str] = OnFirstUse(lambda: _discovered()[1])
#: the metrics `evaluate` scores when none is named: the default set (context precision,
#: faithfulness, context recall, answer relevancy, in that order)
DEFAULT_METRICS: Sequence[str] = _DefaultSet()
#: names kept for a release after a rename: old name -> new name
_RENAMED = {"RAG_METRICS": "DEFAULT_METRICS"}


def __getattr__(name: str) -> Any:
    # a renamed name still answers, with a DeprecationWarning naming the new one
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"localeval.metrics.{name} is deprecated: use {new}", DeprecationWarning, stacklevel=2
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def spec(name: str) -> MetricSpec | None:
    """The spec of the metric called `name` (None for a name that is no metric)."""
    return REGISTRY.get(name)


def on_judge_scale(judged: Iterable[str]) -> set[str]:
    """Those of the judged metrics whose score is on the judge's scale: where a judge's own
    gate threshold applies (not context precision, the embedder's score for some samples)."""
    return {name for name in judged if name in REGISTRY and REGISTRY[name].judge_gate}


def metric_names() -> frozenset[str]:
    return frozenset(REGISTRY)


def build_metric(name: str, options: MetricOptions | None = None) -> Metric:
    """A fresh metric object for `name` with the options that apply to it (KeyError for an
    unknown name)."""
    return REGISTRY[name].build(**dict((options or {}).get(name, {})))


def metric_options() -> list[tuple[MetricSpec, MetricOption]]:
    """Every metric's command-line options, with the metric each belongs to."""
    return [(spec, option) for spec in REGISTRY.values() for option in spec.options]


def _given(value: Any) -> bool:
    """Whether an option's value was given (not its unset None, False or ())."""
    return value is not None and value is not False and value != ()


def take_old_spellings(values: Mapping[str, Any]) -> tuple[dict[str, Any], list[MetricOption]]:
    """`values` (options by dest) with those given by an old dest moved to the current one,
    and the options that were so given; UsageError for one given by both names."""
    taken, renamed = dict(values), []
    for _, option in metric_options():
        if option.old_dest is None or option.old_dest not in taken:
            continue
        value = taken.pop(option.old_dest)
        if not _given(value):
            continue
        if _given(taken.get(option.dest)):
            raise UsageError(
                f"{param(option.dest)} is given twice: also by its old name "
                f"{param(option.old_dest)}"
            )
        taken[option.dest] = value
        renamed.append(option)
    return taken, renamed


def options_from_code(given: Mapping[str, Any]) -> dict[str, Any]:
    """Options given in code, by dest, as the command line hands them on: a path as a Path,
    a repeatable option's single value as a list; an unknown name refused (UsageError)."""
    declared = {option.dest: option for _, option in metric_options()}
    values: dict[str, Any] = {}
    for name, value in given.items():
        option = declared.get(name)
        if option is None:
            known = ", ".join(sorted(declared))
            raise UsageError(f"options: unknown option '{name}' (known: {known})")
        if option.multiple and isinstance(value, str | os.PathLike):
            value = [value]
        if option.is_path:
            value = [Path(v) for v in value] if option.multiple else Path(value)
        values[name] = tuple(value) if option.multiple else value
    return values


def configure_metrics(names: list[str], values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The metrics' constructor arguments from their options' values (keyed by each
    option's dest), checked against the metrics asked for (UsageError)."""
    configured: dict[str, dict[str, Any]] = {}
    for name, metric in REGISTRY.items():
        given = {o.dest: values.get(o.dest) for o in metric.options}
        kwargs = metric.configure(given, name in names) if metric.options else {}
        if kwargs:
            configured[name] = kwargs
    return configured


__all__ = [
    "DEFAULT_METRICS",
    "PLUGIN_PROBLEMS",
    "REGISTRY",
    "EmbedsByLanguage",
    "Metric",
    "MetricBase",
    "MetricOptions",
    "MetricResult",
    "MetricSpec",
    "MetricWithSettings",
    "OnFirstUse",
    "Tools",
    "build_metric",
    "configure_metrics",
    "metric_names",
    "metric_options",
    "on_judge_scale",
    "options_from_code",
    "public_settings",
    "spec",
    "take_old_spellings",
]
