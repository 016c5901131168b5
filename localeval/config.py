"""models.toml: the named judge and embedding models, and every setting they run with.

Nothing about a model is hard-coded in localeval; this file is the one place to change it.
Relative paths in it are resolved against the file's own folder.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from localeval.backends import (
    DEFAULT_EMBEDDER_BACKEND,
    DEFAULT_JUDGE_BACKEND,
    embedder_backend,
    judge_backend,
)
from localeval.errors import ConfigError, param
from localeval.metrics import metric_names
from localeval.prompts.sets import DEFAULT_PROMPTS, prompt_set
from localeval.text import LANGUAGES
from localeval.verdict_maps import KINDS, VerdictMap

MODELS_ENV = "LOCALEVAL_MODELS"
_PROJECT_MODELS = Path(__file__).resolve().parent.parent / "models.toml"


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: which backend runs it, with that backend's settings (for the default,
    llama-cpp: a GGUF file and how llama.cpp runs it)."""

    name: str
    backend: str = DEFAULT_JUDGE_BACKEND
    #: the backend's own settings, as its `settings()` read them from the entry
    settings: Hashable = None
    #: quality-gate thresholds on this judge's scale, replacing the metrics' defaults for the
    #: metrics it judges (a small judge's probabilities are compressed: see `calibrate`);
    #: not part of the model's identity (the same loaded model serves any thresholds)
    thresholds: Mapping[str, float] = field(default_factory=dict, hash=False, compare=False)
    #: per kind of verdict, the map from the judge's raw P(Yes) to the probability that a
    #: person agrees (`localeval calibrate --fit`); empty for an uncalibrated judge. Like
    #: the thresholds, not part of the model's identity, but of the run's
    calibration: Mapping[str, VerdictMap] = field(default_factory=dict, hash=False, compare=False)
    #: the prompt set the RAG metrics ask this judge with (localeval.prompts.sets); recorded
    #: with each run as its prompt version
    prompts: str = field(default=DEFAULT_PROMPTS, hash=False, compare=False)


@dataclass(frozen=True)
class EmbedderConfig:
    """One embedder: which backend runs it, with that backend's settings."""

    name: str
    backend: str = DEFAULT_EMBEDDER_BACKEND
    settings: Hashable = None
    #: the languages it embeds well ("en", "zh"); empty: not said. A run warns when its
    #: samples are in a language the embedder does not list
    languages: tuple[str, ...] = field(default=(), hash=False, compare=False)


@dataclass(frozen=True)
class ModelsConfig:
    """The whole of models.toml."""

    source: Path
    judges: dict[str, JudgeConfig]
    embedders: dict[str, EmbedderConfig]
    default_judge: str
    default_embedder: str
    provision: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: other names for judge entries ([judge_aliases] fast = "qwen2.5-coder-0.5b")
    judge_aliases: dict[str, str] = field(default_factory=dict)

    def judge(self, name: str | None = None) -> JudgeConfig:
        """The judge called `name` (an entry or an alias of one), or the default one."""
        chosen = name or self.default_judge
        chosen = self.judge_aliases.get(chosen, chosen)
        if chosen not in self.judges:
            known = ", ".join(sorted(self.judges)) or "none"
            raise ConfigError(f"no judge model named '{chosen}' in {self.source} (known: {known})")
        return self.judges[chosen]

    def with_judge_setting(self, key: str, value: Any) -> ModelsConfig:
        """These models with `key` set to `value` in every judge entry whose backend has that
        setting (a command-line option over models.toml, as --state-cache-gb)."""
        judges = {}
        for name, judge in self.judges.items():
            settings = judge.settings
            if is_dataclass(settings) and key in {f.name for f in fields(settings)}:
                judge = replace(judge, settings=replace(settings, **{key: value}))  # type: ignore[type-var]
            judges[name] = judge
        return replace(self, judges=judges)

    def embedder(self, name: str | None = None) -> EmbedderConfig:
        """The embedder called `name`, or the default one."""
        chosen = name or self.default_embedder
        if chosen not in self.embedders:
            known = ", ".join(sorted(self.embedders)) or "none"
            raise ConfigError(f"no embedder named '{chosen}' in {self.source} (known: {known})")
        return self.embedders[chosen]


def find_models_file(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where models.toml is: the given path, $LOCALEVAL_MODELS, ./models.toml, or the project's."""
    if explicit:
        return Path(explicit)
    if os.environ.get(MODELS_ENV):
        return Path(os.environ[MODELS_ENV])
    local = Path.cwd() / "models.toml"
    if local.is_file():
        return local
    return _PROJECT_MODELS


#: keys every judge entry may have, whatever its backend
_JUDGE_KEYS = {"backend", "thresholds", "calibration", "prompts", "provision"}
_EMBEDDER_KEYS = {"backend", "languages", "provision"}


def _thresholds(table: Any, where: str) -> dict[str, float]:
    """A judge's gate thresholds: metric name -> number in [0, 1]."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of metric = threshold")
    if not table:
        return {}
    known = metric_names()
    for metric, value in table.items():
        if metric not in known:
            raise ConfigError(
                f"{where}: unknown metric '{metric}' (known: {', '.join(sorted(known))})"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ConfigError(f"{where}: '{metric}' must be a number between 0 and 1")
    return {metric: float(value) for metric, value in table.items()}


def _number(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: '{key}' must be a number, got {value!r}")
    return float(value)


def _calibration(table: Any, where: str) -> dict[str, VerdictMap]:
    """A judge's calibration maps: kind of verdict -> {a, b, fitted_on, ece, reliability}."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of verdict kind = {{ a = ..., b = ... }}")
    maps: dict[str, VerdictMap] = {}
    for kind, entry in table.items():
        here = f"{where[:-1]}.{kind}]"
        if kind not in KINDS:
            known = ", ".join(sorted(KINDS))
            raise ConfigError(f"{where}: unknown kind of verdict '{kind}' (known: {known})")
        if not isinstance(entry, dict) or not {"a", "b"} <= set(entry):
            raise ConfigError(f"{here}: needs a and b (p' = sigmoid(a * logit(p) + b))")
        unknown = set(entry) - {"a", "b", "fitted_on", "ece", "reliability"}
        if unknown:
            raise ConfigError(f"{here}: unknown setting(s) {', '.join(sorted(unknown))}")
        a = _number(entry["a"], here, "a")
        if a <= 0:
            # a map must keep the judge's order: a larger P(Yes) never means less support
            raise ConfigError(f"{here}: 'a' must be above 0, got {a}")
        fitted_on = entry.get("fitted_on", "")
        if not isinstance(fitted_on, str):
            raise ConfigError(f"{here}: 'fitted_on' must be str, got {fitted_on!r}")
        ece = entry.get("ece")
        maps[kind] = VerdictMap(
            kind,
            a,
            _number(entry["b"], here, "b"),
            fitted_on,
            None if ece is None else _number(ece, here, "ece"),
            _reliability(entry.get("reliability", []), here),
        )
    return maps


def _reliability(rows: Any, where: str) -> tuple[tuple[float, float, int, float, float], ...]:
    """Stored reliability bins: [low, high, n, mean score, mean label] each."""
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == 5 and all(isinstance(v, int | float) for v in r)
        for r in rows
    ):
        raise ConfigError(f"{where}: 'reliability' must be a list of [low, high, n, score, label]")
    return tuple((float(a), float(b), int(n), float(s), float(y)) for a, b, n, s, y in rows)


def load_models_config(path: str | os.PathLike[str] | None = None) -> ModelsConfig:
    """Read and validate models.toml; raise ConfigError with the file and key on any problem."""
    source = find_models_file(path)
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{source}: models file not found (pass {param('models')} PATH or set {MODELS_ENV})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc})") from None
    base = source.resolve().parent
    provision: dict[str, dict[str, Any]] = {}
    judges: dict[str, JudgeConfig] = {}
    for name, table in (raw.get("judges") or {}).items():
        where = f"{source} [judges.{name}]"
        kind, settings = _backend_settings(table, where, base, "judge", _JUDGE_KEYS)
        thresholds = _thresholds(table.get("thresholds", {}), f"{where[:-1]}.thresholds]")
        maps = _calibration(table.get("calibration", {}), f"{where[:-1]}.calibration]")
        prompts = table.get("prompts", DEFAULT_PROMPTS)
        if not isinstance(prompts, str):
            raise ConfigError(f"{where}: 'prompts' must be str, got {prompts!r}")
        prompt_set(prompts, where)
        judges[name] = JudgeConfig(name, kind, settings, thresholds, maps, prompts)
        if "provision" in table:
            provision[f"judges.{name}"] = table["provision"]
    embedders: dict[str, EmbedderConfig] = {}
    for name, table in (raw.get("embedders") or {}).items():
        where = f"{source} [embedders.{name}]"
        kind, settings = _backend_settings(table, where, base, "embedder", _EMBEDDER_KEYS)
        languages = table.get("languages", [])
        if not isinstance(languages, list) or not set(languages) <= set(LANGUAGES):
            raise ConfigError(
                f"{where}: 'languages' must be a list of {', '.join(map(repr, LANGUAGES))}, "
                f"got {languages!r}"
            )
        embedders[name] = EmbedderConfig(name, kind, settings, tuple(languages))
        if "provision" in table:
            provision[f"embedders.{name}"] = table["provision"]

    default_judge = raw.get("default_judge") or next(iter(judges), "")
    default_embedder = raw.get("default_embedder") or next(iter(embedders), "")
    if default_judge and default_judge not in judges:
        raise ConfigError(f"{source}: default_judge '{default_judge}' is not a [judges] entry")
    if default_embedder and default_embedder not in embedders:
        raise ConfigError(
            f"{source}: default_embedder '{default_embedder}' is not an [embedders] entry"
        )
    aliases = _judge_aliases(raw.get("judge_aliases", {}), judges, source)
    return ModelsConfig(
        source, judges, embedders, default_judge, default_embedder, provision, aliases
    )


def _judge_aliases(table: Any, judges: dict[str, JudgeConfig], source: Path) -> dict[str, str]:
    """[judge_aliases]: alias = "entry name", each naming a [judges] entry, none an entry."""
    where = f"{source} [judge_aliases]"
    if not isinstance(table, dict):
        raise ConfigError(f'{where}: must be a table of alias = "judge entry"')
    for alias, target in table.items():
        if not isinstance(target, str) or target not in judges:
            raise ConfigError(f"{where}: '{alias}' must name a [judges] entry, got {target!r}")
        if alias in judges:
            raise ConfigError(f"{where}: '{alias}' is already the name of a [judges] entry")
    return dict(table)


def _backend_settings(
    table: dict[str, Any], where: str, base: Path, role: str, common: set[str]
) -> tuple[str, Hashable]:
    """The entry's backend name and the settings that backend reads from it."""
    default = DEFAULT_JUDGE_BACKEND if role == "judge" else DEFAULT_EMBEDDER_BACKEND
    kind = table.get("backend", default)
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: 'backend' must be str, got {kind!r}")
    backend = judge_backend(kind, where) if role == "judge" else embedder_backend(kind, where)
    unknown = set(table) - common - backend.keys
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    rest = {k: v for k, v in table.items() if k not in common}
    return kind, backend.settings(rest, where, base)
