"""models.toml: the named judge and embedding models, and every setting they run with.

Nothing about a model is hard-coded in localeval; this file is the one place to change it.
Relative paths in it are resolved against the file's own folder.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError

MODELS_ENV = "LOCALEVAL_MODELS"
_PROJECT_MODELS = Path(__file__).resolve().parent.parent / "models.toml"


@dataclass(frozen=True)
class JudgeConfig:
    """One GGUF judge model and how llama.cpp runs it."""

    name: str
    path: Path
    sha256: str | None = None
    n_ctx: int = 8192
    threads: int = 0
    gpu_layers: int = 0
    seed: int = 1234
    batch_size: int = 512
    chat_template: str | None = None
    #: quality-gate thresholds on this judge's scale, replacing SPEC.md's defaults for the
    #: metrics it judges (a small judge's probabilities are compressed: see `calibrate`);
    #: not part of the model's identity (the same loaded model serves any thresholds)
    thresholds: Mapping[str, float] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class EmbedderConfig:
    """One sentence-transformers model folder and how it runs."""

    name: str
    path: Path
    weights: str = "model.safetensors"
    sha256: str | None = None
    device: str = "auto"
    batch_size: int = 64


@dataclass(frozen=True)
class ModelsConfig:
    """The whole of models.toml."""

    source: Path
    judges: dict[str, JudgeConfig]
    embedders: dict[str, EmbedderConfig]
    default_judge: str
    default_embedder: str
    provision: dict[str, dict[str, Any]] = field(default_factory=dict)

    def judge(self, name: str | None = None) -> JudgeConfig:
        """The judge called `name`, or the default one."""
        chosen = name or self.default_judge
        if chosen not in self.judges:
            known = ", ".join(sorted(self.judges)) or "none"
            raise ConfigError(f"no judge model named '{chosen}' in {self.source} (known: {known})")
        return self.judges[chosen]

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


def _typed(table: dict[str, Any], key: str, kind: type, where: str, default: Any) -> Any:
    value = table.get(key, default)
    # bool is an int in Python; a setting that wants a number must not accept true/false
    if value is not None and (
        not isinstance(value, kind) or (kind is int and isinstance(value, bool))
    ):
        raise ConfigError(f"{where}: '{key}' must be {kind.__name__}, got {value!r}")
    return value


_JUDGE_KEYS = {
    "path",
    "sha256",
    "n_ctx",
    "threads",
    "gpu_layers",
    "seed",
    "batch_size",
    "chat_template",
    "thresholds",
    "provision",
}
_EMBEDDER_KEYS = {"path", "weights", "sha256", "device", "batch_size", "provision"}


def _thresholds(table: Any, where: str) -> dict[str, float]:
    """A judge's gate thresholds: metric name -> number in [0, 1]."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table of metric = threshold")
    if not table:
        return {}
    # only now: the metric registry imports every metric's libraries
    from localeval.metrics import metric_names

    known = metric_names()
    for metric, value in table.items():
        if metric not in known:
            raise ConfigError(
                f"{where}: unknown metric '{metric}' (known: {', '.join(sorted(known))})"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ConfigError(f"{where}: '{metric}' must be a number between 0 and 1")
    return {metric: float(value) for metric, value in table.items()}


def load_models_config(path: str | os.PathLike[str] | None = None) -> ModelsConfig:
    """Read and validate models.toml; raise ConfigError with the file and key on any problem."""
    source = find_models_file(path)
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{source}: models file not found (pass --models PATH or set {MODELS_ENV})"
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
        unknown = set(table) - _JUDGE_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
        model_path = _typed(table, "path", str, where, None)
        if model_path is None:
            raise ConfigError(f"{where}: 'path' is required")
        judges[name] = JudgeConfig(
            name=name,
            path=(base / model_path).resolve(),
            sha256=_typed(table, "sha256", str, where, None),
            n_ctx=_typed(table, "n_ctx", int, where, 8192),
            threads=_typed(table, "threads", int, where, 0),
            gpu_layers=_typed(table, "gpu_layers", int, where, 0),
            seed=_typed(table, "seed", int, where, 1234),
            batch_size=_typed(table, "batch_size", int, where, 512),
            chat_template=_typed(table, "chat_template", str, where, None),
            thresholds=_thresholds(table.get("thresholds", {}), f"{where[:-1]}.thresholds]"),
        )
        if "provision" in table:
            provision[f"judges.{name}"] = table["provision"]

    embedders: dict[str, EmbedderConfig] = {}
    for name, table in (raw.get("embedders") or {}).items():
        where = f"{source} [embedders.{name}]"
        unknown = set(table) - _EMBEDDER_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
        model_path = _typed(table, "path", str, where, None)
        if model_path is None:
            raise ConfigError(f"{where}: 'path' is required")
        device = _typed(table, "device", str, where, "auto")
        if device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"{where}: 'device' must be auto, cpu or cuda, got {device!r}")
        embedders[name] = EmbedderConfig(
            name=name,
            path=(base / model_path).resolve(),
            weights=_typed(table, "weights", str, where, "model.safetensors"),
            sha256=_typed(table, "sha256", str, where, None),
            device=device,
            batch_size=_typed(table, "batch_size", int, where, 64),
        )
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
    return ModelsConfig(source, judges, embedders, default_judge, default_embedder, provision)
