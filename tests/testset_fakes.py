"""A fake judge for `localeval generate`: it writes questions from what the prompt says,
so that its answers do not depend on the order of calls (as with the real judge)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from localeval.backends.fake import FakeIdentity, StandIn
from localeval.judge import Prompt, Usage
from localeval.schema import Object, Schema, Str, parse
from localeval.text import split_sentences

#: a chunk holding this word gets a reference its chunk does not support
UNSUPPORTED = "UNSUPPORTED"


def _body(segment: str) -> tuple[str, str]:
    """(heading, first sentence of the text) of a prompt segment 'Text:\\n<chunk>'."""
    chunk = segment.strip().split("\n", 1)[1].strip()
    heading, _, rest = chunk.partition("\n\n")
    sentences = split_sentences(rest or heading)
    return heading.strip(), (sentences[0] if sentences else heading).strip()


class WriterJudge(FakeIdentity):
    """generate(): a question about the chunk's heading, answered by its first sentence;
    yes_probability(): `support` for "does the context say" (0.1 for a chunk marked
    UNSUPPORTED), `answered` for "does the context answer"."""

    name = "writer"
    sha256 = "2" * 64

    def __init__(
        self,
        support: float = 0.9,
        answered: float = 0.1,
        rewrite: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> None:
        self.support = support
        self.answered = answered
        self.rewrite = rewrite
        self.usage = Usage()
        self.prompts: list[Prompt] = []

    def _count(self, prompt: Prompt) -> None:
        self.prompts.append(prompt)
        self.usage.judge_calls += 1
        self.usage.prompt_tokens += len(prompt.user.split())

    def generate(self, prompt: Prompt, schema: Schema) -> Any:
        self._count(prompt)
        assert isinstance(schema, Object)
        keys = [key for key, _ in schema.fields]
        zh = prompt.segments[0].startswith("文本")
        heading, fact = _body(prompt.segments[0])
        if "fact_2" in keys:
            other, second = _body(prompt.segments[1])
            question = (
                f"{heading}和{other}有什么关系？" if zh else f"How do {heading} and {other} relate?"
            )
            reply = {
                "fact_1": fact,
                "fact_2": second,
                "question": question,
                "answer": f"{fact} {second}",
            }
        elif keys == ["question"]:
            reply = {
                "question": f"{heading}的按钮是什么颜色？"
                if zh
                else f"What colour is the {heading} button?"
            }
        else:
            question = (
                f"关于{heading}，手册怎么说？"
                if zh
                else f"What does the manual say about {heading}?"
            )
            reply = {"fact": fact, "question": question, "answer": fact}
        if self.rewrite is not None:
            reply = self.rewrite(reply)
        bounded = {
            key: reply[key][: sub.max_chars] if isinstance(sub, Str) else reply[key]
            for key, sub in schema.fields
        }
        return parse(schema, json.dumps(bounded, ensure_ascii=False, separators=(",", ":")))

    def yes_probability(self, prompt: Prompt) -> float:
        self._count(prompt)
        if "answer the question" in prompt.segments[-1]:
            return self.answered
        return 0.1 if UNSUPPORTED in prompt.user else self.support

    def choice_probabilities(self, prompt: Prompt, options: Sequence[str]) -> list[float]:
        raise AssertionError("generate asks no choice")

    def fits(self, prompt: Prompt, reserve: int = 0) -> bool:
        return len(prompt.user) + reserve < 100_000


class CachedStandIn(StandIn):
    """A stand-in backend whose models sit behind the cache, as the llama-cpp and
    sentence-transformers ones do: each load builds a new model with `make` (and keeps it in
    `loaded`), so a test can see whether a run loaded one at all."""

    cacheable = True

    def __init__(self, make: Callable[[], Any]) -> None:
        super().__init__(make())
        self.make = make
        self.loaded: list[Any] = []

    def load(self, name: str, settings: None) -> Any:
        self.loaded.append(self.make())
        return self.loaded[-1]


def write_docs(folder: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative name -> text) under `folder`; return the folder."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def manual(topics: Sequence[tuple[str, str]]) -> str:
    """A Markdown document with one section per (heading, text)."""
    return "\n\n".join(f"## {heading}\n\n{text}" for heading, text in topics) + "\n"


EN_TOPICS = [
    ("Power supply", "The appliance draws 450 W at start-up. Both cords must be connected "
     "before the power button is pressed."),
    ("Rack mounting", "Two people lift the chassis, which weighs 28 kg without its disks. "
     "Slide it in until the rail latches click."),
    ("Status light", "A blinking blue light means the disks are being checked at boot; "
     "solid green means the web console is ready."),
    ("Firewall ports", "Backup agents reach the appliance on TCP port 7443 from each "
     "protected server, and replication between appliances uses TCP 7444."),
    ("Retention policy", "The default policy keeps 14 daily and 8 weekly restore points, so "
     "the oldest one is about a year old."),
    ("Email alerts", "A daily summary at 07:00 lists every job of the previous night, sent "
     "through your own mail server."),
]  # fmt: skip
ZH_TOPICS = [
    ("电池续航", "充满电的电池在正常使用下可以工作十二个小时，足够一个完整班次使用。"),
    ("扫描距离", "扫描头的有效扫描距离为五厘米到六十厘米，可以识别一维码和二维码。"),
    ("离线模式", "网络中断时终端进入离线模式，最多可以暂存五千条扫码记录，之后再上传。"),
]


def json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def words_in(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))
