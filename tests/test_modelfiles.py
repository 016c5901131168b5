"""Model files are checked before llama.cpp sees them: not a GGUF, truncated, wrong sha256."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.backends.gguf_header import read_header
from localeval.backends.model_files import check_gguf
from localeval.cli import main
from localeval.config import load_models_config
from localeval.errors import ModelFileError


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, alignment: int | None = None) -> int:
    """A small but well-formed GGUF v3 file: metadata of several types (a string array like
    a vocabulary among them) and two tensors, F32 and Q8_0. Returns its size."""
    metadata = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("test"),
        _string("test.context_length") + struct.pack("<I", 4) + struct.pack("<I", 64),
        _string("test.flag") + struct.pack("<I", 7) + b"\x01",
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_string(t) for t in ("a", "bb", "<|im_end|>")),
        _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + b"\0" * 12,
    ]
    if alignment is not None:
        metadata.append(
            _string("general.alignment") + struct.pack("<I", 4) + struct.pack("<I", alignment)
        )
    align = alignment or 32
    # tensor 0: F32 [3, 5] = 60 bytes at offset 0; tensor 1: Q8_0 [64] = 2 blocks of 34 bytes
    f32_bytes = 3 * 5 * 4
    q8_offset = -(-f32_bytes // align) * align
    tensors = [
        _string("a.weight") + struct.pack("<IQQIQ", 2, 3, 5, 0, 0),
        _string("b.weight") + struct.pack("<IQIQ", 1, 64, 8, q8_offset),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    header += b"".join(metadata) + b"".join(tensors)
    header += b"\0" * (-len(header) % align)
    body = bytes(range(256))[: q8_offset + 2 * 34]
    path.write_bytes(header + body)
    return len(header) + len(body)


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    write_gguf(path)
    return path


def truncate(path: Path, size: int) -> Path:
    cut = path.with_name("cut-" + path.name)
    cut.write_bytes(path.read_bytes()[:size])
    return cut


def test_complete_file_passes(gguf: Path) -> None:
    check = check_gguf(gguf, None)
    assert check.ok, check.problem
    assert check.sha256 == hashlib.sha256(gguf.read_bytes()).hexdigest()
    header = read_header(gguf)
    assert header.required_size == gguf.stat().st_size and header.tensor_count == 2


def test_custom_alignment_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "aligned.gguf"
    size = write_gguf(path, alignment=64)
    assert read_header(path).required_size == size
    assert check_gguf(path, None).ok
    assert not check_gguf(truncate(path, size - 1), None).ok


def test_truncated_tensor_data_is_refused_without_a_sha256(gguf: Path) -> None:
    size = gguf.stat().st_size
    cut = truncate(gguf, size - 1)
    check = check_gguf(cut, None)
    assert check.problem == (
        f"is truncated: {size - 1:,} bytes, its header describes {size:,} "
        "(an interrupted download or copy?)"
    )


@pytest.mark.parametrize("size", [24, 40, 100, 180])
def test_file_cut_inside_its_header_is_refused(gguf: Path, size: int) -> None:
    assert check_gguf(truncate(gguf, size), None).problem == (
        "is truncated: the file ends inside its header"
    )


def test_not_a_gguf_and_empty_file(tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("this is a text file, not a model " * 4)
    assert check_gguf(text, None).problem == "is not a GGUF file (bad magic number)"
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    assert check_gguf(empty, None).problem == "is not a GGUF file (bad magic number)"
    assert check_gguf(tmp_path, None).problem == "not a regular file"


def test_unsupported_version(gguf: Path) -> None:
    data = bytearray(gguf.read_bytes())
    data[4:8] = struct.pack("<I", 1)
    gguf.write_bytes(bytes(data))
    assert check_gguf(gguf, None).problem == "has unsupported GGUF version 1"


def test_corrupt_header_is_refused(gguf: Path) -> None:
    data = bytearray(gguf.read_bytes())
    data[24:32] = struct.pack("<Q", 1 << 60)  # the first metadata key's length
    gguf.write_bytes(bytes(data))
    assert check_gguf(gguf, None).problem == (f"has a corrupt header (a string of {1 << 60} bytes)")


def test_sha256_mismatch(gguf: Path) -> None:
    wrong = "ab" * 32
    check = check_gguf(gguf, wrong)
    actual = hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert check.problem == (
        f"sha256 {actual[:12]}… does not match the {wrong[:12]}… in models.toml "
        "(truncated or replaced file)"
    )
    assert check_gguf(gguf, actual.upper()).ok


def test_judge_refuses_a_bad_file_before_llama_cpp_is_imported(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localeval.backends.llama_judge import LlamaJudge
    from localeval.backends.llama_settings import LlamaCppSettings

    poisoned = types.ModuleType("llama_cpp")

    def __getattr__(name: str) -> object:
        raise AssertionError(f"llama_cpp.{name} used for a file that should have been refused")

    poisoned.__getattr__ = __getattr__  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "llama_cpp", poisoned)
    cut = truncate(gguf, gguf.stat().st_size - 10)
    for path, sha in ((cut, None), (gguf, "00" * 32)):
        with pytest.raises(ModelFileError) as info:
            LlamaJudge("j", LlamaCppSettings(path=path, sha256=sha))
        assert str(info.value).startswith(f"judge model 'j' {path}: ")


def test_cli_refuses_a_truncated_judge(gguf: Path, tmp_path: Path) -> None:
    cut = truncate(gguf, gguf.stat().st_size - 1)
    models = tmp_path / "models.toml"
    models.write_text(f'[judges.j]\npath = "{cut.name}"\n[embedders.e]\npath = "x"\n')
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q", "contexts": ["c"], "answer": "A."}) + "\n")
    result = CliRunner().invoke(
        main, ["evaluate", str(data), "-m", "faithfulness", "--models", str(models)]
    )
    assert result.exit_code == 2
    size = cut.stat().st_size
    assert result.stderr.splitlines()[-1] == (
        f"Error: judge model 'j' {cut}: is truncated: {size:,} bytes, its header describes "
        f"{size + 1:,} (an interrupted download or copy?). Run scripts/setup.sh to provision "
        "it, or fix its path/sha256 in models.toml."
    )


@pytest.mark.real_models
def test_real_judge_files_are_whole_and_their_prefix_is_not(tmp_path: Path) -> None:
    models = load_models_config()
    for judge in models.judges.values():
        header = read_header(judge.settings.path)
        assert header.required_size == judge.settings.path.stat().st_size, judge.name
    default = models.judge().settings.path
    with default.open("rb") as handle:
        prefix = handle.read(8 << 20)  # the header and the first tensors
    cut = tmp_path / "partial.gguf"
    cut.write_bytes(prefix)
    problem = check_gguf(cut, None).problem
    assert problem is not None and problem.startswith(f"is truncated: {8 << 20:,} bytes")
