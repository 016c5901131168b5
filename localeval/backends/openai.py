"""Judge backend "openai": a model on an OpenAI-compatible inference server (llama.cpp's
llama-server or llama-cpp-python's, vLLM, Ollama) inside the network.

    [judges.team-judge]
    backend = "openai"
    base_url = "http://gpu-box:8000/v1"
    model = "qwen2.5-7b-instruct"
    revision = "2025-01"        # yours to bump when the model behind the name changes
    concurrency = 8             # samples in flight

A server has no file to hash, so the judge is identified by base_url, model and the
declared revision (the cache and resumed runs key on them), with what the server reports
about itself recorded beside them (`diff` warns when that changes). Identifying the judge
asks the server, before any sample is scored: a server that is down or does not serve the
model stops the command at once. docs/servers.md says what each kind of server returns.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from localeval.backends import ModelStatus, typed_setting
from localeval.backends.gguf_header import GGUFHeaderError, read_header
from localeval.backends.server_count import CountingServerJudge, measure_speed
from localeval.backends.server_http import Connection, Endpoint, ServerError
from localeval.backends.server_judge import ServerJudge, ServerModel
from localeval.backends.server_shapes import CONSTRAINTS, DIALECTS, TOP_LOGPROBS, about, detect
from localeval.errors import ConfigError
from localeval.judge import JudgeSpeed, ModelIdentity
from localeval.prompts.chat import ChatTemplate

#: bump when the way a server's reply turns into a value changes (it is one of the judge's
#: settings: cached values and resumable runs of an older protocol are not used)
#: 2: llama-server's token texts from their bytes; a token without text ends a choice
SERVER_PROTOCOL = 2

# messages a server renders through its own template, to find the template's text
_SYSTEM, _USER = "LOCALEVAL-SYSTEM-SLOT", "LOCALEVAL-USER-SLOT"


@dataclass(frozen=True)
class OpenAISettings:
    """A server judge's models.toml entry."""

    base_url: str
    model: str
    revision: str = ""
    api_key_env: str | None = None
    concurrency: int = 1
    timeout_s: float = 120.0
    retries: int = 5
    backoff_s: float = 0.5
    #: "auto" (told apart by what /v1/models says) or one of server_shapes.DIALECTS
    server: str = "auto"
    #: how structured replies are constrained; None: the server kind's own way
    constraint: str | None = None
    #: the model's Jinja chat template, or a file holding it (GGUF, tokenizer_config.json)
    chat_template: str | None = None
    chat_template_path: Path | None = None
    n_ctx: int = 8192
    seed: int = 1234


def _number(table: Mapping[str, Any], key: str, where: str, default: float, low: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
        raise ConfigError(f"{where}: '{key}' must be a number >= {low:g}, got {value!r}")
    return float(value)


def _count(table: Mapping[str, Any], key: str, where: str, default: int, low: int) -> int:
    value: int = typed_setting(table, key, int, where, default)
    if value < low:
        raise ConfigError(f"{where}: '{key}' must be at least {low}, got {value}")
    return value


def _choice(table: Mapping[str, Any], key: str, where: str, known: list[str]) -> str | None:
    value = typed_setting(table, key, str, where)
    if value is not None and value not in known:
        raise ConfigError(f"{where}: '{key}' must be one of {', '.join(known)}, got {value!r}")
    return value


def _template_source(table: Mapping[str, Any], where: str, base: Path) -> tuple[Any, Any]:
    """(inline template, template file): Jinja text holds "{%" or "{{"; else a path."""
    value = typed_setting(table, "chat_template", str, where)
    if value is None or "{%" in value or "{{" in value:
        return value, None
    return None, (base / value).resolve()


class OpenAIBackend:
    keys = frozenset(
        {
            "base_url",
            "model",
            "revision",
            "api_key_env",
            "concurrency",
            "timeout_s",
            "retries",
            "backoff_s",
            "server",
            "constraint",
            "chat_template",
            "n_ctx",
            "seed",
        }
    )
    cacheable = True

    def __init__(self) -> None:
        # identified once per settings: load() then needs no second round of requests
        self._found: dict[tuple[str, OpenAISettings], tuple[ModelIdentity, ServerModel]] = {}

    def settings(self, table: Mapping[str, Any], where: str, base: Path) -> OpenAISettings:
        required = {key: typed_setting(table, key, str, where) for key in ("base_url", "model")}
        for key, value in required.items():
            if not value:
                raise ConfigError(f"{where}: '{key}' is required for backend \"openai\"")
        inline, path = _template_source(table, where, base)
        settings = OpenAISettings(
            base_url=required["base_url"].rstrip("/"),
            model=required["model"],
            revision=typed_setting(table, "revision", str, where, ""),
            api_key_env=typed_setting(table, "api_key_env", str, where),
            concurrency=_count(table, "concurrency", where, 1, 1),
            timeout_s=_number(table, "timeout_s", where, 120.0, 0.001),
            retries=_count(table, "retries", where, 5, 0),
            backoff_s=_number(table, "backoff_s", where, 0.5, 0.0),
            server=_choice(table, "server", where, ["auto", *DIALECTS]) or "auto",
            constraint=_choice(table, "constraint", where, list(CONSTRAINTS)),
            chat_template=inline,
            chat_template_path=path,
            n_ctx=_count(table, "n_ctx", where, 8192, 1),
            seed=typed_setting(table, "seed", int, where, 1234),
        )
        try:
            endpoint(settings, check_key=False).parts  # noqa: B018 (checks the URL now)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        return settings

    def identify(self, name: str, settings: OpenAISettings) -> ModelIdentity:
        return self._find(name, settings)[0]

    def load(self, name: str, settings: OpenAISettings) -> ServerJudge:
        return ServerJudge(*self._find(name, settings))

    def counter(self, name: str, settings: OpenAISettings) -> CountingServerJudge:
        """The judge with its completions counted, not sent (localeval.estimate.counting)."""
        return CountingServerJudge(*self._find(name, settings))

    def measure(self, name: str, settings: OpenAISettings) -> JudgeSpeed:
        """The server's speed from here: a few short requests."""
        judge = self.load(name, settings)
        try:
            return measure_speed(judge)
        finally:
            judge.close()

    def _find(self, name: str, settings: OpenAISettings) -> tuple[ModelIdentity, ServerModel]:
        if (name, settings) not in self._found:
            self._found[name, settings] = find_server(name, settings)
        return self._found[name, settings]

    def status(self, settings: OpenAISettings) -> ModelStatus:
        quick = replace(settings, retries=0, timeout_s=min(settings.timeout_s, 5.0))
        try:
            Connection(endpoint(quick)).get("/models")
        except (ServerError, ConfigError) as exc:
            return ModelStatus(str(exc), settings.base_url, f"model {settings.model}")
        return ModelStatus(
            None, settings.base_url, f"model {settings.model}, {settings.concurrency} in flight"
        )


def endpoint(settings: OpenAISettings, check_key: bool = True) -> Endpoint:
    """Where the server is; the API key read from the environment variable named."""
    key = None
    if settings.api_key_env and check_key:
        key = os.environ.get(settings.api_key_env)
        if not key:
            raise ConfigError(
                f"judge server {settings.base_url}: environment variable "
                f"{settings.api_key_env} (api_key_env) is not set"
            )
    return Endpoint(
        settings.base_url, key, settings.timeout_s, settings.retries, settings.backoff_s
    )


def find_server(name: str, settings: OpenAISettings) -> tuple[ModelIdentity, ServerModel]:
    """Ask the server what it is and whether it serves the model; find the chat template."""
    where = endpoint(settings)
    connection = Connection(where)
    entry = _model_entry(connection, settings)
    kind = detect(entry) if settings.server == "auto" else settings.server
    dialect = DIALECTS[kind]
    reported: dict[str, Any] = {"kind": kind, "model": about(entry)}
    for path in dialect.about:
        try:
            reported[path] = about(Connection(replace(where, retries=0)).get(path, root=True))
        except ServerError:
            reported[path] = "unavailable"
    limits = [settings.n_ctx] + [
        v.get(k)
        for v in reported.values()
        if isinstance(v, dict)
        for k in ("max_model_len", "n_ctx")
        if isinstance(v.get(k), int)
    ]
    template = chat_template(name, settings, kind, connection)
    constraint = settings.constraint or dialect.constraint
    served = ServerModel(
        where, settings.model, dialect, constraint, template, min(limits), settings.seed,
        settings.concurrency,
    )  # fmt: skip
    digest = hashlib.sha256(json.dumps([template.head, template.middle, template.tail]).encode())
    identity = ModelIdentity(
        name,
        {"base_url": settings.base_url, "model": settings.model, "revision": settings.revision},
        {
            "server": kind,
            "constraint": constraint,
            "n_ctx": served.n_ctx,
            "chat_template": digest.hexdigest()[:16],
            "top_logprobs": TOP_LOGPROBS,
            "call_protocol": SERVER_PROTOCOL,
        },
        reported,
    )
    return identity, served


def _model_entry(connection: Connection, settings: OpenAISettings) -> dict[str, Any]:
    """The server's /v1/models entry for the model; ConfigError if it serves others only."""
    listed = connection.get("/models")
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        raise ServerError(f"judge server {settings.base_url}/models: no model list in the reply")
    entries = [e for e in data if isinstance(e, dict)]
    for entry in entries:
        # llama-server lists its first --alias as the id, and every alias in `aliases`
        aliases = entry.get("aliases")
        if entry.get("id") == settings.model or (
            isinstance(aliases, list) and settings.model in aliases
        ):
            return entry
    if not entries:  # (llama-server started without a model lists none)
        raise ConfigError(
            f"judge server {settings.base_url} serves no model (its /models lists none); "
            "start it with the judge's model"
        )
    served = ", ".join(str(e.get("id")) for e in entries)
    raise ConfigError(
        f"judge server {settings.base_url} does not serve model '{settings.model}' "
        f"(it serves: {served}); fix 'model' in models.toml"
    )


def chat_template(
    name: str, settings: OpenAISettings, kind: str, connection: Connection
) -> ChatTemplate:
    """The model's chat template: from models.toml, else as the server renders one."""
    owner = f"judge '{name}'"
    if settings.chat_template is not None:
        return ChatTemplate.compile(settings.chat_template, owner)
    if settings.chat_template_path is not None:
        return ChatTemplate.compile(_template_file(settings.chat_template_path, owner), owner)
    messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": _USER}]
    rendered: Any = None
    if kind == "llama-server":
        rendered = connection.post("/apply-template", {"messages": messages}, root=True)
    elif kind == "vllm":
        tokens = connection.post(
            "/tokenize",
            {"model": settings.model, "messages": messages, "add_generation_prompt": True},
            root=True,
        )
        rendered = connection.post(
            "/detokenize", {"model": settings.model, "tokens": tokens.get("tokens")}, root=True
        )
    else:
        raise ConfigError(
            f"{owner}: a {kind} server does not say its chat template; set chat_template in "
            "models.toml (the Jinja text, or the path of the model's GGUF file or "
            "tokenizer_config.json)"
        )
    text = rendered.get("prompt") if isinstance(rendered, dict) else None
    if not isinstance(text, str):
        raise ServerError(f"{owner}: the server did not render its chat template: {rendered!r}")
    return ChatTemplate.split(text, owner, _SYSTEM, _USER)


def _template_file(path: Path, owner: str) -> str:
    """The chat template a GGUF file, a tokenizer_config.json or a Jinja file holds."""
    try:
        if path.suffix == ".gguf":
            template = read_header(path).chat_template
        elif path.suffix == ".json":
            template = json.loads(path.read_text(encoding="utf-8")).get("chat_template")
            if isinstance(template, list):  # named templates: the default one
                named = {t.get("name"): t.get("template") for t in template}
                template = named.get("default")
        else:
            template = path.read_text(encoding="utf-8")
    except (OSError, ValueError, GGUFHeaderError, AttributeError) as exc:
        raise ConfigError(f"{owner}: chat_template file {path}: {exc}") from None
    if not isinstance(template, str) or not template:
        raise ConfigError(f"{owner}: {path} holds no chat template")
    return template


JUDGE_BACKEND = OpenAIBackend()
