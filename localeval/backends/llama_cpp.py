"""Judge backend "llama-cpp" (the default): a GGUF file run in-process by llama-cpp-python.

The entry names the file (`path`, `sha256` to pin it) and how llama.cpp runs it; the
identity is the file's sha256 with the settings that change its numbers.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.backends import ModelStatus, counted_setting, required_path, typed_setting
from localeval.backends.llama_count import CountingLlamaJudge, measure_speed
from localeval.backends.llama_judge import LlamaJudge
from localeval.backends.llama_settings import KV_CACHE_TYPES, LlamaCppSettings, verified_identity
from localeval.backends.model_files import check_gguf
from localeval.backends.state_limit import checked_gigabytes
from localeval.errors import ConfigError
from localeval.judge import JudgeSpeed, ModelIdentity

_DEFAULTS = LlamaCppSettings(path=Path())
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class LlamaCppBackend:
    keys = frozenset(
        {
            "path",
            "sha256",
            "n_ctx",
            "threads",
            "gpu_layers",
            "seed",
            "batch_size",
            "chat_template",
            "state_cache_gb",
            "type_k",
            "type_v",
            "flash_attn",
        }
    )
    cacheable = True

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> LlamaCppSettings:
        def number(key: str, minimum: int, meaning: str, maximum: int | None = None) -> int:
            default = getattr(_DEFAULTS, key)
            return counted_setting(table, key, where, default, minimum, meaning, maximum)

        sha256 = typed_setting(table, "sha256", str, where)
        if sha256 is not None and not _SHA256.fullmatch(sha256):
            raise ConfigError(f"{where}: 'sha256' must be 64 hexadecimal digits, got {sha256!r}")
        return LlamaCppSettings(
            path=required_path(table, where, base),
            sha256=sha256,
            # a prompt of the judge's shortest question with one short chunk needs ~64 tokens
            n_ctx=number("n_ctx", 64, "a number of tokens"),
            threads=number("threads", 0, "a number of threads (0: one per core)"),
            gpu_layers=number("gpu_layers", -1, "a number of layers (-1: all)"),
            seed=number("seed", 0, "a seed", 2**32 - 1),
            batch_size=number("batch_size", 1, "a number of tokens"),
            chat_template=typed_setting(table, "chat_template", str, where),
            state_cache_gb=_gigabytes(table, where),
            **kv_cache(table, where),
        )

    def identify(self, name: str, settings: LlamaCppSettings) -> ModelIdentity:
        return verified_identity(name, settings)

    def load(self, name: str, settings: LlamaCppSettings) -> LlamaJudge:
        return LlamaJudge(name, settings)

    def counter(self, name: str, settings: LlamaCppSettings) -> CountingLlamaJudge:
        """The judge's vocabulary only, counting what each call would evaluate."""
        return CountingLlamaJudge(name, settings)

    def measure(self, name: str, settings: LlamaCppSettings) -> JudgeSpeed:
        """Load the judge and time it on this machine (a few seconds)."""
        started = time.perf_counter()
        judge = LlamaJudge(name, settings)
        try:
            return measure_speed(judge, started)
        finally:
            judge.close()

    def status(self, settings: LlamaCppSettings) -> ModelStatus:
        check = check_gguf(settings.path, settings.sha256)
        return ModelStatus(check.problem, str(settings.path), f"n_ctx {settings.n_ctx}")


def kv_cache(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """type_k, type_v and flash_attn, checked: llama.cpp would otherwise refuse them only
    once the model loads (a quantized value cache needs flash attention)."""
    types = {}
    for key in ("type_k", "type_v"):
        value = typed_setting(table, key, str, where, getattr(_DEFAULTS, key))
        if value not in KV_CACHE_TYPES:
            known = ", ".join(KV_CACHE_TYPES)
            raise ConfigError(f"{where}: '{key}' must be one of {known}; got {value!r}")
        types[key] = value
    flash_attn: bool = typed_setting(table, "flash_attn", bool, where, _DEFAULTS.flash_attn)
    if types["type_v"] != "f16" and not flash_attn:
        raise ConfigError(
            f"{where}: 'type_v' = {types['type_v']!r} needs flash_attn = true "
            "(llama.cpp quantizes the value cache only with flash attention)"
        )
    return {**types, "flash_attn": flash_attn}


JUDGE_BACKEND = LlamaCppBackend()


def _gigabytes(table: Mapping[str, Any], where: str) -> float | None:
    """state_cache_gb, a decimal number of GB; None where the entry gives none."""
    value = table.get("state_cache_gb")
    return None if value is None else checked_gigabytes(value, where)
