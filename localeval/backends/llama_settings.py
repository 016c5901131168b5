"""A GGUF judge's settings (its models.toml entry) and what of them is its identity: the
file's sha256 with the settings that change llama.cpp's numbers
(localeval.backends.llama_judge runs it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.backends.model_files import check_gguf, require
from localeval.judge import ModelIdentity

#: bump when the way a judge call turns into a value changes (llama_judge's yes/no tokens, how a
#: prompt's tokens are batched: llama.cpp's arithmetic depends on it). It is one of the
#: judge's settings, so cached values and resumable runs of an older protocol are not used.
#: 2: the chat template's tail is evaluated in one batch with the prompt's last segment.
CALL_PROTOCOL = 2


@dataclass(frozen=True)
class LlamaCppSettings:
    """A GGUF judge's models.toml entry: the file, and how llama.cpp runs it."""

    path: Path
    sha256: str | None = None
    n_ctx: int = 8192
    threads: int = 0
    gpu_layers: int = 0
    seed: int = 1234
    batch_size: int = 512
    chat_template: str | None = None
    #: the size limit of the context states kept on disk, in GB (0: keep none; None: half
    #: the disk's free space, at most 64 GB)
    state_cache_gb: float | None = None
    #: the key/value cache's number types (KV_CACHE_TYPES): a quantized cache makes a state
    #: smaller and may change the judge's numbers slightly
    type_k: str = "f16"
    type_v: str = "f16"
    #: llama.cpp's flash attention (which a quantized value cache needs): other sums
    flash_attn: bool = False


#: the key/value cache types a judge may use, as llama.cpp's ggml type numbers
KV_CACHE_TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2}


def kv_cache_settings(settings: LlamaCppSettings) -> dict[str, Any]:
    """The key/value cache's settings when they are not llama.cpp's defaults, else none: a
    judge with the defaults keeps the identity (cached verdicts, comparable runs, kept
    states) it had before these settings existed."""
    if (settings.type_k, settings.type_v, settings.flash_attn) == ("f16", "f16", False):
        return {}
    return {"type_k": settings.type_k, "type_v": settings.type_v, "flash_attn": settings.flash_attn}


def judge_settings(settings: LlamaCppSettings) -> dict[str, Any]:
    """What besides the GGUF file can change this judge's numbers: llama.cpp's arithmetic
    depends on how tokens are batched and on the device, the prompt on the chat template,
    windowing of long contexts on n_ctx, the key/value cache's types and flash attention,
    and all of them on the call protocol. (Not threads or the seed: verdicts are read from
    logits and replies decoded greedily.)"""
    return {
        "batch_size": settings.batch_size,
        "chat_template": settings.chat_template,
        "gpu_layers": settings.gpu_layers,
        "n_ctx": settings.n_ctx,
        **kv_cache_settings(settings),
        "call_protocol": CALL_PROTOCOL,
    }


def verified_identity(name: str, settings: LlamaCppSettings) -> ModelIdentity:
    """The judge's identity (its GGUF sha256), after checking the file; ModelFileError if
    it is unusable."""
    sha256 = require(
        check_gguf(settings.path, settings.sha256),
        f"judge model '{name}'",
        "Run scripts/setup.sh to provision it, or fix its path/sha256 in models.toml.",
    )
    return ModelIdentity(name, {"sha256": sha256}, judge_settings(settings))
