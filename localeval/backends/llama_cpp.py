"""Judge backend "llama-cpp" (the default): a GGUF file run in-process by llama-cpp-python.

The entry names the file (`path`, `sha256` to pin it) and how llama.cpp runs it; the
identity is the file's sha256 with the settings that change its numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.backends import ModelStatus, required_path, typed_setting
from localeval.backends.files import check_gguf
from localeval.backends.llama_judge import LlamaCppSettings, LlamaJudge, verified_identity
from localeval.judge import ModelIdentity

_DEFAULTS = LlamaCppSettings(path=Path())


class LlamaCppBackend:
    keys = frozenset(
        {"path", "sha256", "n_ctx", "threads", "gpu_layers", "seed", "batch_size", "chat_template"}
    )
    cacheable = True

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> LlamaCppSettings:
        def number(key: str) -> int:
            value: int = typed_setting(table, key, int, where, getattr(_DEFAULTS, key))
            return value

        return LlamaCppSettings(
            path=required_path(table, where, base),
            sha256=typed_setting(table, "sha256", str, where),
            n_ctx=number("n_ctx"),
            threads=number("threads"),
            gpu_layers=number("gpu_layers"),
            seed=number("seed"),
            batch_size=number("batch_size"),
            chat_template=typed_setting(table, "chat_template", str, where),
        )

    def identify(self, name: str, settings: LlamaCppSettings) -> ModelIdentity:
        return verified_identity(name, settings)

    def load(self, name: str, settings: LlamaCppSettings) -> LlamaJudge:
        return LlamaJudge(name, settings)

    def status(self, settings: LlamaCppSettings) -> ModelStatus:
        check = check_gguf(settings.path, settings.sha256)
        return ModelStatus(check.problem, str(settings.path), f"n_ctx {settings.n_ctx}")


JUDGE_BACKEND = LlamaCppBackend()
