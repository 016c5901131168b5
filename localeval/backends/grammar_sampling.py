"""Greedy decoding under a grammar, at close to the model's own speed.

llama.cpp's grammar sampler checks every token of the vocabulary (150,000 for Qwen) against
the grammar before each step, which halves generation speed on a CPU (docs/measurements/speed.md). A
greedy decoder only needs the likeliest token the grammar allows, and most of the time that is the
likeliest token of all: so the grammar is asked about that one token first, and about the
whole vocabulary only when it refuses it. The chosen token is the same either way, since
the likeliest allowed token is the likeliest token whenever the latter is allowed.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

# llama_token_data as numpy sees it: {id: int32, logit: float32, p: float32}
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])


class GreedyGrammarSampler:
    """Picks, step by step, the likeliest token that the grammar allows, and advances it."""

    def __init__(self, vocab: Any, gbnf: str, n_vocab: int):
        import llama_cpp

        self._llama = llama_cpp
        self._sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not self._sampler:
            raise ValueError("llama.cpp refused the grammar")
        self._n_vocab = n_vocab
        self._one = (llama_cpp.llama_token_data * 1)()
        self._all = (llama_cpp.llama_token_data * n_vocab)()
        self._all_view = np.frombuffer(self._all, dtype=_TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self.full_checks = 0  # steps where the likeliest token was refused

    def reset(self) -> None:
        """Start again from the grammar's root (before each reply)."""
        self._llama.llama_sampler_reset(self._sampler)

    def _allowed(self, data: Any, size: int) -> None:
        """Let the grammar set the logit of each refused candidate in `data` to -inf."""
        array = self._llama.llama_token_data_array(
            ctypes.cast(data, ctypes.POINTER(self._llama.llama_token_data)), size, -1, False
        )
        self._llama.llama_sampler_apply(self._sampler, ctypes.byref(array))

    def next_token(self, logits: np.ndarray) -> int:
        """The likeliest allowed token after these logits; the grammar moves past it."""
        token = int(np.argmax(logits))
        self._one[0].id, self._one[0].logit, self._one[0].p = token, float(logits[token]), 0.0
        self._allowed(self._one, 1)
        if not np.isfinite(self._one[0].logit):
            self.full_checks += 1
            # the grammar may reorder candidates: restore ids, then read what it left
            self._all_view["id"] = self._ids
            self._all_view["logit"] = logits
            self._allowed(self._all, self._n_vocab)
            allowed = self._all_view["logit"]
            best = int(np.argmax(allowed))
            if not np.isfinite(allowed[best]):
                raise ValueError("the grammar allows no token here")
            token = int(self._all_view["id"][best])
        self._llama.llama_sampler_accept(self._sampler, token)
        return token

    def close(self) -> None:
        if self._sampler:
            self._llama.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        self.close()
