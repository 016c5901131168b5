"""A context state's bytes per token for each key/value cache type (f16, q8_0, q4_0), with and
without lossless compression (zstd levels 1 and 3, lz4), and the judge's prompt tokens per
second per type, the types taking turns in one process (a shared machine's load then falls on
each alike): docs/measurements/speed.md, "A quantized key/value cache".

Usage: python scripts/measure_kv_cache.py [JUDGE] [ROUNDS]
(needs zstandard and lz4, which localeval itself does not)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace

import lz4.frame
import zstandard

from localeval.backends.llama_judge import LlamaJudge
from localeval.backends.llama_settings import LlamaCppSettings
from localeval.backends.llama_states import sequence_state
from localeval.config import load_models_config
from localeval.prompts import rag

VARIANTS: dict[str, dict[str, object]] = {
    "f16": {},
    "q8_0": {"type_k": "q8_0", "type_v": "q8_0", "flash_attn": True},
    "q4_0": {"type_k": "q4_0", "type_v": "q4_0", "flash_attn": True},
}
TEXT = (
    "The pump must be primed before the first start. Open the bleed screw, fill the housing "
    "with clean water until it runs out, close the screw and run the motor for two minutes. "
)
Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]
CODECS: dict[str, Codec] = {
    "zstd-1": (zstandard.ZstdCompressor(level=1).compress, zstandard.ZstdDecompressor().decompress),
    "zstd-3": (zstandard.ZstdCompressor(level=3).compress, zstandard.ZstdDecompressor().decompress),
    "lz4": (lz4.frame.compress, lz4.frame.decompress),
}


def sizes(name: str, state: bytes, tokens: int) -> str:
    """The state's bytes per token, raw and through each codec, with the codecs' speed."""
    parts = [f"{name}: {tokens} tokens, {len(state) / tokens:,.0f} B/token raw"]
    for label, (compress, decompress) in CODECS.items():
        started = time.perf_counter()
        packed = compress(state)
        packing = time.perf_counter() - started
        started = time.perf_counter()
        assert decompress(packed) == state
        unpacking = time.perf_counter() - started
        parts.append(
            f"{label} {len(packed) / tokens:,.0f} B/token (ratio {len(state) / len(packed):.3f}, "
            f"{len(state) / packing / 1e6:.0f} / {len(state) / unpacking / 1e6:.0f} MB/s)"
        )
    return "; ".join(parts)


def main(name: str, rounds: int) -> None:
    base = load_models_config().judge(name).settings
    assert isinstance(base, LlamaCppSettings)
    judges = {
        v: LlamaJudge(name, replace(base, state_cache_gb=0, **c))  # type: ignore[arg-type]
        for v, c in VARIANTS.items()
    }
    rates: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for round_ in range(rounds):
        for variant, judge in judges.items():
            # new contexts each round: nothing is reused from the round before
            contexts = [f"Manual section {round_}.{i}: " + TEXT * 6 for i in range(3)]
            prompt = rag.context_says(contexts, f"The pump is primed in round {round_}.")
            before = judge.usage.prompt_tokens
            started = time.perf_counter()
            judge.yes_probability(prompt)
            seconds = time.perf_counter() - started
            rates[variant].append((judge.usage.prompt_tokens - before) / seconds)
            if round_ == 0:
                state = sequence_state(judge._llm._ctx.ctx)
                assert state is not None
                print(sizes(variant, state, judge._llm.n_tokens), flush=True)
    f16 = statistics.median(rates["f16"])
    for variant, values in rates.items():
        median = statistics.median(values)
        every = ", ".join(f"{x:.1f}" for x in values)
        print(
            f"{variant}: prompt tokens/s median {median:.1f} ({median / f16:.3f} of f16): {every}"
        )


if __name__ == "__main__":
    main(
        sys.argv[1] if len(sys.argv) > 1 else "qwen2.5-coder-1.5b",
        int(sys.argv[2]) if len(sys.argv) > 2 else 5,
    )
