"""`localeval answer`: fill a test set's answers and contexts from the user's own pipeline.

The pipeline is a Python function `question -> {"answer": str, "contexts": [str, ...]}`
(or an `(answer, contexts)` tuple), named as `module:function` or `path/to/file.py:function`.
Each answer is appended to `OUTPUT.partial` as soon as it is made (flushed to disk), so a
crash, a Ctrl-C or a failing sample loses nothing: the same command continues where it
stopped. OUTPUT itself is written, atomically, only when every question is answered (a
device or FIFO such as /dev/stdout is streamed to then, its answers kept meanwhile beside
the test set, in `TESTSET.answers.partial`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from localeval.data.samples import Sample, load_samples
from localeval.errors import UsageError, param
from localeval.results.output_files import STREAM, OutputTarget
from localeval.testset.output import check_output, json_line, write_jsonl

PARTIAL_FORMAT = 1


class AppError(UsageError):
    """The user's pipeline could not be loaded, raised, or returned something unusable."""


App = Callable[[str], Any]


def load_app(spec: str) -> App:
    """The function `spec` names: `package.module:function` (imported with the working
    folder on the path, as `python -m` would) or `path/to/file.py:function`."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(
            f"{param('app')} '{spec}': give it as module:function or path/to/file.py:function"
        )
    try:
        if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
            module = _module_from_file(Path(module_name))
        else:
            if str(Path.cwd()) not in sys.path and "" not in sys.path:
                sys.path.insert(0, str(Path.cwd()))
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise AppError(
                f"{param('app')} '{spec}': no module '{module_name}' (run from the folder that "
                "holds it, or give its file: path/to/file.py:function)"
            ) from None
        raise AppError(
            f"{param('app')} '{spec}': importing {module_name} failed: {_describe(exc)}"
        ) from None
    except UsageError:
        raise
    except Exception as exc:  # whatever the user's module raises while it loads
        raise AppError(
            f"{param('app')} '{spec}': importing {module_name} failed: {_describe(exc)}"
        ) from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise AppError(f"{param('app')} '{spec}': {module_name} has no '{attribute}'")
        target = getattr(target, part)
    if not callable(target):
        raise AppError(f"{param('app')} '{spec}': {attribute} is not a function")
    return target  # type: ignore[no-any-return]


def _module_from_file(path: Path) -> Any:
    if not path.is_file():
        raise AppError(f"{param('app')}: no such file {path}")
    name = "localeval_app_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AppError(f"{param('app')}: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # so that it can import its neighbours
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _describe(exc: BaseException) -> str:
    """'ValueError: message (at file.py:12)', the place being the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _context_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    text = getattr(item, "page_content", None)  # LangChain and LlamaIndex documents
    return text if isinstance(text, str) else None


def read_reply(reply: Any) -> tuple[str, list[str]]:
    """(answer, contexts) from what the app returned; ValueError says what is wrong."""
    if isinstance(reply, dict):
        missing = [k for k in ("answer", "contexts") if k not in reply]
        if missing:
            raise ValueError(f"the returned dict has no '{missing[0]}'")
        answer, contexts = reply["answer"], reply["contexts"]
    elif isinstance(reply, tuple | list) and len(reply) == 2:
        answer, contexts = reply
    else:
        raise ValueError(
            f"returned {type(reply).__name__}; return {{'answer': str, 'contexts': [str, ...]}} "
            "or a tuple (answer, contexts)"
        )
    if not isinstance(answer, str):
        raise ValueError(f"the answer is {type(answer).__name__}, not a string")
    if not isinstance(contexts, list | tuple):
        raise ValueError(f"contexts is {type(contexts).__name__}, not a list of strings")
    texts = [_context_text(item) for item in contexts]
    if any(t is None for t in texts):
        bad = next(item for item, t in zip(contexts, texts, strict=True) if t is None)
        raise ValueError(f"contexts holds a {type(bad).__name__}, not a string")
    return answer, [t for t in texts if t is not None]


@dataclass(frozen=True)
class AnswerResult:
    answered: int  # by this run
    resumed: int  # by an earlier, interrupted run
    seconds: float  # spent in the app by this run


def partial_path(output: Path) -> Path:
    """Where the answers to an output file are kept until every question is answered."""
    return output.with_name(output.name + ".partial")


def _partial_for(target: OutputTarget, testset: Path) -> Path:
    """Beside the file the output writes (a symlink's target); for a stream, which has no
    folder of its own, beside the test set."""
    if target.kind == STREAM:
        return testset.with_name(testset.name + ".answers.partial")
    return partial_path(target.file)


def _app_file(app_spec: str) -> Path | None:
    module_name = app_spec.rpartition(":")[0]
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        return Path(module_name)
    return None


def check_answer_output(testset: Path, output: Path, app_spec: str) -> OutputTarget:
    """What writing `output` will do, checked before the app is called: never the test set,
    the app's own file, or where the partial answers are kept (UsageError)."""
    protected = [(testset, "the test set")]
    if (app_file := _app_file(app_spec)) is not None:
        protected.append((app_file, "the app's file"))
    target = check_output(output, protected)
    partial = _partial_for(target, testset)
    check_output(partial, protected, "the partial answers")
    return target


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_partial(
    partial: Path, header: dict[str, Any], ids: set[str]
) -> dict[str, dict[str, Any]]:
    """Answers an interrupted run kept, by sample id; UsageError when they belong to another
    test set or app. A last line cut short by a crash is left out."""
    lines = partial.read_text(encoding="utf-8").splitlines()
    try:
        found = json.loads(lines[0]) if lines else {}
    except json.JSONDecodeError:
        found = {}
    for key, what in (
        ("testset_sha256", "another version of the test set"),
        ("app", "another app"),
    ):
        if found.get(key) != header[key]:
            raise UsageError(
                f"{partial} holds answers from {what} ({key} {found.get(key)!r}); run with "
                f"{param('resume=False')} to start again, or delete it"
            )
    done: dict[str, dict[str, Any]] = {}
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and row.get("sample_id") in ids:
            done[row["sample_id"]] = row
    return done


def filled_row(sample: Sample, answer: str, contexts: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"sample_id": sample.sample_id}
    if "kind" in sample.extra:
        row["kind"] = sample.extra["kind"]
    if sample.category is not None:
        row["category"] = sample.category
    row["question"] = sample.question
    if sample.reference_answer is not None:
        row["reference_answer"] = sample.reference_answer
    row["answer"] = answer
    row["contexts"] = contexts
    row.update((k, v) for k, v in sample.extra.items() if k not in row)
    return row


class Counter(Protocol):
    """Told how many questions there are and of each one answered (the CLI's progress)."""

    def start(self, total: int, done_before: int) -> None: ...

    def advance(self) -> None: ...


class _NoCounter:
    def start(self, total: int, done_before: int) -> None:
        pass

    def advance(self) -> None:
        pass


def answer_testset(
    testset: Path,
    app_spec: str,
    output: Path,
    resume: bool = True,
    counter: Counter | None = None,
    app: App | None = None,
    target: OutputTarget | None = None,
) -> AnswerResult:
    """Call the app for every question of `testset` and write the filled set to `output`
    (`target`: what check_answer_output said of it, when the caller asked first)."""
    target = target or check_answer_output(testset, output, app_spec)
    partial = _partial_for(target, testset)
    samples = load_samples(testset)
    app = app or load_app(app_spec)
    header = {
        "localeval_answer": PARTIAL_FORMAT,
        "testset_sha256": _sha256(testset),
        "app": app_spec,
    }
    ids = {s.sample_id for s in samples}
    done: dict[str, dict[str, Any]] = {}
    if partial.exists() and resume:
        done = _read_partial(partial, header, ids)
    resumed = len(done)
    with _open_partial(partial, header, fresh=not done) as handle:
        counter = counter or _NoCounter()
        counter.start(len(samples), len(done))
        seconds = _answer_all(samples, app, app_spec, done, handle, partial, counter)
    rows = (
        filled_row(s, done[s.sample_id]["answer"], done[s.sample_id]["contexts"]) for s in samples
    )
    write_jsonl(target, rows)
    partial.unlink()
    return AnswerResult(len(samples) - resumed, resumed, seconds)


def _open_partial(partial: Path, header: dict[str, Any], fresh: bool) -> Any:
    try:
        handle = partial.open("w" if fresh else "a", encoding="utf-8")
        if fresh:
            handle.write(json_line(header))
        return handle
    except OSError as exc:
        raise UsageError(f"cannot write {partial}: {exc.strerror or exc}") from None


def _answer_all(
    samples: Sequence[Sample], app: App, spec: str, done: dict[str, dict[str, Any]],
    handle: Any, partial: Path, counter: Counter,
) -> float:  # fmt: skip
    spent = 0.0
    for sample in samples:
        if sample.sample_id in done:
            continue
        started = time.perf_counter()
        try:
            answer, contexts = read_reply(app(sample.question))
        except Exception as exc:
            kept = f"; the {len(done)} answers before it are kept in {partial}" if done else ""
            raise AppError(
                f"the app {spec} failed on sample '{sample.sample_id}' (line {sample.line}: "
                f"{sample.question[:80]!r}): {_describe(exc)}{kept}. Fix it and run the same "
                "command again to continue"
            ) from None
        spent += time.perf_counter() - started
        row = {"sample_id": sample.sample_id, "answer": answer, "contexts": contexts}
        handle.write(json_line(row))
        handle.flush()
        os.fsync(handle.fileno())  # the answer survives a crash of the next call
        done[sample.sample_id] = row
        counter.advance()
    return spent
