"""Backends by name: models.toml entries select them, each reads its own settings, and runs
record the identity a backend gives (which need not be a file's sha256)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.backends import judge_backend
from localeval.backends.fake import HashJudge, ScriptedJudge
from localeval.cli import main
from localeval.config import load_models_config
from localeval.errors import ConfigError
from localeval.history.records import fingerprint
from localeval.judge import ModelIdentity, Prompt
from localeval.results.model import RunInfo
from localeval.results.refs import RunRef
from localeval.schema import Array, Object, Str

QUESTIONS = Object((("questions", Array(Str(20), 1, 1)),))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_unknown_backend_or_setting_is_a_one_line_error(tmp_path: Path) -> None:
    models = write(tmp_path, '[judges.j]\nbackend = "gpt"\n')
    with pytest.raises(ConfigError) as error:
        load_models_config(models)
    assert str(error.value).startswith(
        f"{models} [judges.j]: unknown judge backend 'gpt' (known: fake, llama-cpp"
    )
    models = write(tmp_path, '[judges.j]\npath = "j.gguf"\npth = "typo"\n')
    with pytest.raises(ConfigError, match=r"\[judges.j\]: unknown setting\(s\) pth"):
        load_models_config(models)
    models = write(tmp_path, '[judges.j]\nbackend = "fake"\npath = "j.gguf"\n')
    with pytest.raises(ConfigError, match=r"unknown setting\(s\) path"):
        load_models_config(models)


def test_the_default_backends_need_no_backend_line(tmp_path: Path) -> None:
    models = load_models_config(write(tmp_path, '[judges.j]\npath = "j.gguf"\nn_ctx = 300\n'))
    judge = models.judge()
    assert judge.backend == "llama-cpp" and judge.settings.n_ctx == 300  # type: ignore[attr-defined]
    assert judge.settings.path == (tmp_path / "j.gguf").resolve()  # type: ignore[attr-defined]


def test_the_fake_judge_plays_back_answers_from_models_toml(tmp_path: Path) -> None:
    models = load_models_config(
        write(tmp_path, '[judges.j]\nbackend = "fake"\nanswers = [0.25, {questions = ["Q?"]}]\n')
    )
    config = models.judge()
    judge = judge_backend(config.backend).load(config.name, config.settings)
    assert isinstance(judge, ScriptedJudge) and judge.name == "j"
    prompt = Prompt.of("system", "user")
    assert judge.yes_probability(prompt) == 0.25
    assert judge.generate(prompt, QUESTIONS) == {"questions": ["Q?"]}
    judge.assert_done()
    hashed = load_models_config(write(tmp_path, '[judges.h]\nbackend = "fake"\n')).judge()
    assert isinstance(judge_backend("fake").load(hashed.name, hashed.settings), HashJudge)


def test_a_cli_run_with_the_fake_backend_records_its_identity(tmp_path: Path) -> None:
    models = write(tmp_path, '[judges.j]\nbackend = "fake"\n[embedders.e]\nbackend = "fake"\n')
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q?", "contexts": ["c."], "answer": "A."}) + "\n")
    out = tmp_path / "r.json"
    args = ["evaluate", str(data), "--models", str(models), "-o", str(out), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    run = json.loads(out.read_text())["run"]
    assert run["judge"] == {"name": "j", "sha256": HashJudge.sha256}
    assert run["embedder"]["name"] == "e"


def test_a_judge_without_a_file_is_identified_by_what_names_it() -> None:
    server = ModelIdentity("s", {"base_url": "http://judge:8000", "model": "m", "revision": "1"})
    assert len(server.key) == 64 and server.record() == {"name": "s", **server.fields}
    base = RunInfo("r", "now", ["faithfulness"], server.record(), None)
    other = RunInfo("r", "now", ["faithfulness"], {**server.record(), "model": "m2"}, None)
    assert fingerprint(base) != fingerprint(other)  # another model is another evaluation


@pytest.mark.parametrize(
    ("text", "names_file"),
    [
        ("latest", False),
        ("latest~2", False),
        ("20240101T000000-abc", False),
        ("results.json", True),
        ("out/r", True),
    ],
)
def test_run_references(text: str, names_file: bool) -> None:
    assert (RunRef(text).path is not None) is names_file


def test_the_fake_judge_holds_a_prompt_with_its_word_until_the_file_exists(
    tmp_path: Path,
) -> None:
    """A held call returns only once the file exists (the Ray ordering test's readiness);
    other prompts never wait, and the two settings go together."""
    import threading

    released = tmp_path / "released"
    models = tmp_path / "models.toml"
    models.write_text(
        '[judges.j]\nbackend = "fake"\nhold_word = "HOLD"\nhold_until = "released"\n',
        encoding="utf-8",
    )
    entry = load_models_config(models).judge("j")
    judge = judge_backend(entry.backend).load("j", entry.settings)
    assert judge.yes_probability(Prompt.of("s", "free")) >= 0
    answered = threading.Event()
    held = threading.Thread(
        target=lambda: (judge.yes_probability(Prompt.of("s", "a HOLD b")), answered.set())
    )
    held.start()
    assert not answered.wait(0.5)  # still held: the file is not there
    released.touch()
    held.join()
    assert answered.is_set()
    models.write_text('[judges.j]\nbackend = "fake"\nhold_word = "HOLD"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'hold_word' and 'hold_until' go together"):
        load_models_config(models).judge("j")
