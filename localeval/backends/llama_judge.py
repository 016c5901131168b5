"""The llama.cpp judge: a GGUF model run in-process by llama-cpp-python.

Three things make its verdicts cheap and reproducible:

* Prefix reuse at segment boundaries (localeval.prompts.chat.TokenSegments): llama.cpp
  keeps the key/value state of the tokens it has evaluated, so the leading segments a
  new prompt shares with it are reused and only the rest is evaluated, one segment per
  llama.cpp call. A segment is always evaluated on its own, from its own start, so its
  numbers are the same whichever prompts came before: reuse never changes a score.
* The state after a prompt's shared part (every segment but the last: the contexts and
  the question) is also kept on disk, in the user's cache folder, when it is long enough
  to be worth it (localeval.backends.llama_states): a later process, or a later version of
  the answers, restores it instead of evaluating the contexts again. Restored cells are
  the ones evaluation would compute, by the same rule.
* Yes/no verdicts are read, not generated: the logits of the first reply token give
  P(Yes) against P(No), which is both the verdict and its confidence.
* Structured replies are generated greedily under a grammar compiled from a typed schema
  whose longest output is known, so a reply is never cut off (localeval.schema).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from localeval.backends.grammar_sampling import GreedyGrammarSampler
from localeval.backends.llama_settings import KV_CACHE_TYPES, LlamaCppSettings, verified_identity
from localeval.backends.llama_states import (
    LOG,
    MIN_KEPT_TOKENS,
    StateStore,
    default_store,
    llama_build,
    sequence_state,
    set_sequence_state,
    state_key,
)
from localeval.errors import ConfigError, JudgeError, PromptTooLongError
from localeval.judge import Prompt, Usage
from localeval.prompts.chat import ChatTemplate, Segment, TokenSegments
from localeval.schema import Schema, max_bytes, parse, to_gbnf

# First reply tokens that count as a yes or a no. Chinese prompts may be answered in
# Chinese; a spelling that is not a single token in the model's vocabulary is skipped.
YES_WORDS = ("Yes", "yes", "YES", " Yes", " yes", "是")
NO_WORDS = ("No", "no", "NO", " No", " no", "否")


def batches(tokens: Segment, n_batch: int) -> list[Segment]:
    """`tokens` as llama.cpp is given them: one call per `n_batch` tokens."""
    return [tokens[start : start + n_batch] for start in range(0, len(tokens), n_batch)]


class LlamaJudge:
    """Judge backed by llama-cpp-python; load once per run and reuse for every sample."""

    #: load the GGUF file's vocabulary only, not its weights (localeval.backends.llama_count)
    vocab_only = False

    def __init__(self, name: str, settings: LlamaCppSettings):
        self.identity = verified_identity(name, settings)
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr

        self.name = name
        self.config = settings
        self.usage = Usage()
        threads = settings.threads or os.cpu_count() or 1
        try:
            # a vocabulary has no training context: llama.cpp warns of one it cannot check
            with suppress_stdout_stderr(disable=not self.vocab_only):
                self._llm = Llama(
                    model_path=str(settings.path),
                    n_ctx=settings.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_gpu_layers=settings.gpu_layers,
                    n_batch=settings.batch_size,
                    seed=settings.seed,
                    type_k=KV_CACHE_TYPES[settings.type_k],
                    type_v=KV_CACHE_TYPES[settings.type_v],
                    flash_attn=settings.flash_attn,
                    logits_all=False,
                    vocab_only=self.vocab_only,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise JudgeError(f"llama.cpp could not load {settings.path}: {exc}") from exc
        # llama.cpp rounds the context up (to a multiple of 256), but llama-cpp-python's
        # token buffer holds only what was asked for: a prompt longer than that crashes it
        self.n_ctx = min(self._llm.n_ctx(), len(self._llm.input_ids))
        self._n_vocab = self._llm.n_vocab()
        add_bos = self._llm.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        self._layout = TokenSegments(self._chat_template(settings), self._tokenize, add_bos)
        self._yes_ids = self._single_token_ids(YES_WORDS)
        self._no_ids = self._single_token_ids(NO_WORDS)
        if not self._yes_ids or not self._no_ids:
            raise JudgeError(f"judge '{self.name}': no single-token Yes/No in its vocabulary")
        self._samplers: dict[Schema, GreedyGrammarSampler] = {}
        # the segments whose key/value state llama.cpp holds, in order
        self._state: list[Segment] = []
        self.states: StateStore | None = default_store(settings.state_cache_gb)
        #: what a kept state's key holds besides its tokens: the model, its settings, the build
        #: and the threads (which may change llama.cpp's sums: docs/scale.md)
        parts = [self.identity.key, self.identity.settings, threads, llama_build()]
        self._state_parts = parts
        #: shared parts restored from the store, and their tokens (not evaluated)
        self.restored = 0
        self.restored_tokens = 0

    @property
    def sha256(self) -> str:
        return self.identity.key

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.identity.settings)

    # -- prompt rendering ---------------------------------------------------------------

    def _chat_template(self, settings: LlamaCppSettings) -> ChatTemplate:
        """The models.toml template, else the one the GGUF file carries."""
        source = settings.chat_template or self._llm.metadata.get("tokenizer.chat_template")
        if not source:
            raise ConfigError(
                f"judge '{self.name}': {settings.path.name} carries no chat template; set "
                "chat_template in models.toml"
            )
        return ChatTemplate.compile(source, f"judge '{self.name}'")

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model sees it, through its chat template."""
        return self._layout.template.render(prompt)

    def _tokenize(self, text: str, special: bool, add_bos: bool = False) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special)

    def _segments(self, prompt: Prompt) -> list[Segment]:
        return self._layout.segments(prompt)

    @staticmethod
    def _kept_part(prompt: Prompt, shared: int) -> int:
        """How many of the `shared` leading segments a state kept on disk may hold: those
        that last from one version of the answers to the next (the template's head and
        system message are the first segment)."""
        return shared if prompt.lasting is None else min(shared, 1 + prompt.lasting)

    def _single_token_ids(self, words: tuple[str, ...]) -> list[int]:
        ids: list[int] = []
        for word in words:
            tokens = self._tokenize(word, special=False)
            if len(tokens) == 1 and tokens[0] not in ids:
                ids.append(tokens[0])
        return ids

    def count_tokens(self, prompt: Prompt) -> int:
        return self._layout.count(prompt)

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return self.count_tokens(prompt) + reserve <= self.n_ctx

    # -- evaluation with segment reuse --------------------------------------------------

    def _evaluate(
        self, segments: Sequence[Segment], reserve: int, shared: int | None = None
    ) -> None:
        """Make `segments` the model's state, evaluating only those that differ from it; the
        first `shared` (default: all but the last) are the part kept on disk."""
        shared = len(segments) - 1 if shared is None else shared
        total = sum(len(s) for s in segments)
        if total + reserve > self.n_ctx:
            raise PromptTooLongError(total + reserve, self.n_ctx)
        keep = 0
        # the last segment is always evaluated again: its logits are what the caller reads
        while (
            keep < len(segments) - 1
            and keep < len(self._state)
            and self._state[keep] == segments[keep]
        ):
            keep += 1
        llm = self._llm
        keys = self._kept_keys(segments[:shared], keep)
        for length in sorted(keys, reverse=True):  # the longest kept first
            if self._restore(keys[length], segments[:length]):
                keep = length
                break
        else:
            keep = min(keep, len(self._state))  # a failed restore leaves nothing evaluated
        if sum(len(s) for s in segments[keep:shared]) < MIN_KEPT_TOKENS:
            keys = {}  # what is left to evaluate of the shared part is not worth a file
        llm.n_tokens = sum(len(s) for s in self._state[:keep])  # _decode drops the KV after
        del self._state[keep:]
        for number, segment in enumerate(segments[keep:], start=keep):
            try:
                self._decode(segment, logits=number == len(segments) - 1)
            except RuntimeError as exc:
                llm.n_tokens = 0
                self._state.clear()
                raise JudgeError(f"llama.cpp failed to evaluate the prompt: {exc}") from exc
            self._state.append(segment)
            self.usage.prompt_tokens += len(segment)
            if shared in keys and number == shared - 1:
                shorter = [keys[n] for n in keys if n < shared]
                self._save(keys[shared], segments[:shared], shorter)

    # -- context states kept on disk ----------------------------------------------------

    def _kept_keys(self, prefix: Sequence[Segment], held: int) -> dict[int, str]:
        """The store's keys for the states after the first n segments of `prefix`, by n,
        for those that add enough to the `held` segments the model holds already to be
        worth a file. A later prompt may share only the start of this one's shared part
        (the same contexts, another question after them): the state kept for the whole is
        also named under each shorter part, and restored up to it."""
        if self.states is None:
            return {}
        keys, tokens = {}, 0
        for length, segment in enumerate(prefix[held:], start=held + 1):
            tokens += len(segment)
            if tokens >= MIN_KEPT_TOKENS:
                keys[length] = state_key(self._state_parts, prefix[:length])
        return keys

    def _restore(self, key: str, prefix: Sequence[Segment]) -> bool:
        """Make the state after `prefix` the model's from the store, if it is kept there."""
        tokens = [t for segment in prefix for t in segment]
        state = self.states.load(key, tokens) if self.states is not None else None
        if state is None:
            return False
        llm = self._llm
        if not set_sequence_state(llm._ctx.ctx, state):
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # nothing half-restored is kept
            llm.n_tokens = 0
            self._state.clear()
            return False
        llm._ctx.kv_cache_seq_rm(-1, len(tokens), -1)  # a longer prefix's cells after it
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)
        self._state[:] = prefix
        self.restored += 1
        self.restored_tokens += len(tokens)
        return True

    def _save(self, key: str, prefix: Sequence[Segment], shorter: Sequence[str]) -> None:
        """Keep the model's state (exactly `prefix` evaluated) in the store, also under the
        keys `shorter` of the parts it begins with."""
        state = sequence_state(self._llm._ctx.ctx) if self.states is not None else None
        if self.states is not None and state is not None:
            tokens = [t for segment in prefix for t in segment]
            self.states.save(key, tokens, state, shorter, judge=self.name)

    def _decode(self, tokens: Segment, logits: bool) -> None:
        """Evaluate `tokens` after the first `n_tokens` of the state, in batches of n_batch,
        as Llama.eval does, but compute the last token's logits only when they will be read.

        A prefix segment's logits never are, and computing them multiplies by the output
        matrix, a quarter of a 0.5B model's weights (docs/measurements/speed.md). The
        key/value state, and so every number read later, is the same either way.
        """
        llm = self._llm
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        parts = batches(tokens, llm.n_batch)
        for number, part in enumerate(parts, start=1):
            batch = list(part)
            llm._batch.set_batch(batch=batch, n_past=llm.n_tokens, logits_all=False)
            if not logits or number < len(parts):
                llm._batch.batch.logits[len(batch) - 1] = False
            llm._ctx.decode(llm._batch)
            llm.input_ids[llm.n_tokens : llm.n_tokens + len(batch)] = batch
            llm.n_tokens += len(batch)

    def _extend(self, token: int) -> None:
        """Evaluate one more token after the current state, as a segment of its own."""
        self._decode((token,), logits=True)
        self._state.append((token,))

    def _last_log_probs(self) -> np.ndarray:
        logits = self._last_logits().astype(np.float64)
        return logits - np.logaddexp.reduce(logits)

    # -- the Judge protocol -------------------------------------------------------------

    def yes_probability(self, prompt: Prompt) -> float:
        started = time.perf_counter()
        segments = self._segments(prompt)
        self._evaluate(segments, 1, self._kept_part(prompt, len(segments) - 1))
        log_probs = self._last_log_probs()
        # Compare the two labels only: this is the reply a grammar of "Yes" | "No" admits,
        # with its probability kept instead of being rounded to the likelier label.
        yes = np.logaddexp.reduce(log_probs[self._yes_ids])
        no = np.logaddexp.reduce(log_probs[self._no_ids])
        self.usage.judge_calls += 1
        self.usage.seconds += time.perf_counter() - started
        return float(1.0 / (1.0 + np.exp(no - yes)))

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        started = time.perf_counter()
        base = self._segments(prompt)
        sequences = [tuple(self._tokenize(option, special=False)) for option in options]
        if any(not seq for seq in sequences) or len(set(sequences)) < len(sequences):
            raise JudgeError(f"options must be distinct and non-empty: {list(options)!r}")
        longest = max(len(seq) for seq in sequences)
        # next-token log-probabilities after each token path; option tokens are single-token
        # segments, so a path shared by two options ("1" of "1" and "10") is evaluated once
        memo: dict[Segment, np.ndarray] = {}
        shared = self._kept_part(prompt, len(base) - 1)

        def after(path: Segment) -> np.ndarray:
            if path not in memo:
                self._evaluate(base + [(t,) for t in path], longest, shared)
                memo[path] = self._last_log_probs()
            return memo[path]

        scores = []
        for seq in sequences:
            total = sum(float(after(seq[:i])[token]) for i, token in enumerate(seq))
            # an option that others extend ("1" of "10") counts only if the reply stops
            # there: take away the probability of the tokens that continue it
            continuing = {
                o[len(seq)] for o in sequences if len(o) > len(seq) and o[: len(seq)] == seq
            }
            if continuing:
                stop = 1.0 - float(np.exp(after(seq)[list(continuing)]).sum())
                total += float(np.log(max(stop, 1e-12)))
            scores.append(total)
        values = np.exp(np.array(scores) - np.logaddexp.reduce(scores))
        self.usage.judge_calls += 1
        self.usage.seconds += time.perf_counter() - started
        return [float(v) for v in values]

    def _sampler(self, schema: Schema) -> GreedyGrammarSampler:
        if schema not in self._samplers:
            self._samplers[schema] = GreedyGrammarSampler(
                self._llm._model.vocab, to_gbnf(schema), self._n_vocab
            )
        sampler = self._samplers[schema]
        sampler.reset()
        return sampler

    def _last_logits(self) -> np.ndarray:
        pointer = self._llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        started = time.perf_counter()
        limit = max_bytes(schema) + 1  # every grammar token adds >= 1 byte; +1 for the end
        segments = self._segments(prompt)
        self._evaluate(segments, limit, self._kept_part(prompt, len(segments) - 1))
        output = self._reply(schema, limit)
        self.usage.judge_calls += 1
        self.usage.generated_tokens += len(output)
        self.usage.seconds += time.perf_counter() - started
        text = self._llm.detokenize(output).decode("utf-8", errors="strict")
        return parse(schema, text)

    def _reply(self, schema: Schema, limit: int) -> list[int]:
        """The reply's tokens after the evaluated prompt, each evaluated in turn."""
        import llama_cpp

        sampler = self._sampler(schema)
        vocab = self._llm._model.vocab
        output: list[int] = []
        for _ in range(limit):
            token = sampler.next_token(self._last_logits())  # greedy under the grammar
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                return output
            output.append(token)
            self._extend(token)
        raise JudgeError(f"judge output exceeded the schema's bound of {limit} tokens")

    def close(self) -> None:
        note = self.states.room_note() if self.states is not None else None
        if note is not None:
            LOG.warning("note: %s", note)
        for sampler in self._samplers.values():
            sampler.close()
        self._llm.close()
