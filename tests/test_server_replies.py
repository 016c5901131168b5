"""Replies recorded from llama.cpp's llama-server (tests/llama_server_replies/, SmolLM2-135M
served by the build tests/test_llama_server_real.py runs) and how the server judge reads
them, and what it says when a server fails in each way."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path
from typing import Any

import pytest
from server_fakes import CHATML_JINJA, FakeServer

from localeval.backends.openai import OpenAIBackend
from localeval.backends.server_http import ServerError
from localeval.backends.server_shapes import about, detect, first_token_logprobs
from localeval.errors import ConfigError
from localeval.judge import Prompt

REPLIES = Path(__file__).resolve().parent / "llama_server_replies"


def recorded(name: str) -> Any:
    return json.loads((REPLIES / name).read_text(encoding="utf-8"))


def judge(fake: FakeServer, **settings: Any) -> Any:
    backend = OpenAIBackend()
    table = {"base_url": fake.url, "model": "judge-model", "chat_template": CHATML_JINJA}
    return backend.load("j", backend.settings(table | settings, "test", Path(".")))


def test_llama_server_verdict_tokens_are_read_from_its_logprobs() -> None:
    first = first_token_logprobs(recorded("v1_completions_yes_no.json"))
    assert len(first) == 20
    assert first["No"] == pytest.approx(-0.80658, abs=1e-5)
    assert first["Yes"] == pytest.approx(-2.77586, abs=1e-5)
    assert first["yes"] == pytest.approx(-5.38505, abs=1e-5)
    # the end of the reply, listed without text (its bytes are empty)
    assert "" in first_token_logprobs(recorded("v1_completions_ending.json"))


def test_a_token_cut_inside_a_character_is_not_read_as_a_word() -> None:
    """llama-server cuts `token` where a UTF-8 character is unfinished; its bytes decide."""
    reply = recorded("v1_completions_chinese.json")
    top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    cut = [t for t in top if t["token"] == "" and t["bytes"]]
    assert cut, "the recording holds tokens that end inside a character"
    first = first_token_logprobs(reply)
    assert "在" in first and "Yes" in first
    assert not any(token == "" for token in first)  # each is its bytes, not an empty text
    # a token that is "是" and the start of another character is not the word "是"
    top[0] = {"token": "是", "bytes": [*"是".encode(), 0xE6], "logprob": -0.1}
    assert "是" not in first_token_logprobs(reply)


def test_a_token_without_text_ends_a_choice() -> None:
    """After "1", llama-server lists the end of the reply as "": it is the reply stopping
    at "1", not a continuation towards "10"."""
    with FakeServer() as fake:
        after = {"": {"1": 0.6, "2": 0.4}, "1": {"0": 0.25, "": 0.75}}

        def reply(body: dict[str, Any]) -> dict[str, Any]:
            done = body["prompt"].rpartition("Score: ")[2]
            listed = [
                {"token": t, "bytes": list(t.encode()), "logprob": math.log(p)}
                for t, p in after[done].items()
            ]
            content = [{"token": "x", "logprob": 0.0, "top_logprobs": listed}]
            return {"choices": [{"text": "", "logprobs": {"content": content}}]}

        fake.reply = reply
        prompt = Prompt.of("system", "Rate it.", reply_prefix="Score: ")
        assert judge(fake).choice_probabilities(prompt, ["1", "10"]) == pytest.approx([0.75, 0.25])


def test_llama_server_is_told_apart_and_found_by_any_alias() -> None:
    listed = recorded("v1_models.json")
    (entry,) = listed["data"]
    assert detect(entry) == "llama-server"
    entry["id"], entry["aliases"] = "qwen-judge", ["qwen-judge", "judge-model"]
    with FakeServer() as fake:
        original = fake.answer
        fake.answer = lambda path, body: (  # type: ignore[method-assign]
            (200, listed) if path == "/v1/models" else original(path, body)
        )
        served = judge(fake)  # model = "judge-model": its second alias
        assert served.identity.settings["server"] == "llama-server"


def test_a_server_listing_no_model_is_named() -> None:
    with FakeServer() as fake:
        original = fake.answer
        fake.answer = lambda path, body: (  # type: ignore[method-assign]
            (200, {"object": "list", "data": []}) if path == "/v1/models" else original(path, body)
        )
        with pytest.raises(ConfigError) as refused:
            judge(fake)
    assert str(refused.value) == (
        f"judge server {fake.url} serves no model (its /models lists none); "
        "start it with the judge's model"
    )


def test_what_llama_server_says_of_itself_is_kept_without_what_each_start_changes() -> None:
    kept = about(recorded("props.json"))
    assert kept["model_path"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert kept["total_slots"] == 1 and kept["n_ctx"] == 8192
    assert "build_info" in kept
    # drawn at random at each start: a restarted server is the same judge
    assert "media_marker" not in kept and "is_sleeping" not in kept


def test_llama_server_requests_ask_for_probabilities_only_where_they_are_read() -> None:
    with FakeServer(owned_by="llamacpp") as fake:
        served = judge(fake)
        served.yes_probability(Prompt.of("system", "Is it so?"))
    (read,) = fake.completions()
    assert read["n_probs"] == read["logprobs"] == 20 and read["max_tokens"] == 1
    assert "min_tokens" not in read  # llama-server lists the end of the reply's probability
    assert read["repeat_penalty"] == 1.0 and read["cache_prompt"] is True
    assert "n_probs" not in served.server.dialect.fixed  # not on generated replies


def test_a_server_answering_errors_is_said_to_be_up_but_failing() -> None:
    with FakeServer() as fake:
        fake.fail_next = 10
        with pytest.raises(ServerError) as failed:
            judge(fake, retries=1, backoff_s=0.01).yes_probability(Prompt.of("s", "q"))
    assert str(failed.value) == (
        f"judge server {fake.url} failed 2 times: HTTP 503: model is loading. It is up but "
        "failing (one still loading its model answers 503). (retries and timeout_s are set "
        "in models.toml)"
    )


def test_a_server_that_does_not_answer_in_time_is_said_to_hang() -> None:
    with FakeServer() as fake:
        served = judge(fake, retries=0, timeout_s=0.2)
    with socket.socket() as hung:  # accepts connections (the kernel does), never answers
        hung.bind(("127.0.0.1", fake.port))
        hung.listen()
        with pytest.raises(ServerError) as failed:
            served.yes_probability(Prompt.of("s", "q"))
    assert str(failed.value).endswith(
        "failed 1 time: TimeoutError: timed out. It accepted the request but did not answer "
        "within timeout_s (0.2 s). (retries and timeout_s are set in models.toml)"
    )
