"""The store of context states on disk (localeval.backends.llama_states), without a model:
its checks, its bound, its atomic writes, and `cache stats` / `cache clear`."""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from localeval.backends.llama_settings import judge_settings
from localeval.backends.llama_states import (
    StateStore,
    default_store,
    state_key,
    states_folder,
)
from localeval.cli import main
from localeval.config import load_models_config

TOKENS = list(range(300))
STATE = bytes(range(256)) * 40


def store(tmp_path: Path, limit: int = 10**9) -> StateStore:
    return StateStore(tmp_path / "states", limit)


def test_a_kept_state_is_read_back_for_the_same_key_and_tokens(tmp_path: Path) -> None:
    states = store(tmp_path)
    key = state_key(["sha", {"n_ctx": 8192}, "build"], [TOKENS[:10], TOKENS[10:]])
    assert states.load(key, TOKENS) is None
    assert states.save(key, TOKENS, STATE)
    assert states.load(key, TOKENS) == STATE
    # other tokens under the same key (a collision, a foreign writer) are not trusted
    assert states.load(key, [*TOKENS[:-1], 7]) is None


def test_a_kept_state_is_found_under_the_shorter_prefixes_it_begins_with(
    tmp_path: Path,
) -> None:
    states = store(tmp_path)
    assert states.save("a" * 64, TOKENS, STATE, shorter=["b" * 64])
    assert states.contains("b" * 64) and not states.contains("c" * 64)
    assert states.load("b" * 64, TOKENS[:100]) == STATE  # the whole state: the caller cuts it
    assert states.load("b" * 64, [*TOKENS[:99], 7]) is None  # not the tokens it begins with
    assert states.load("a" * 64, TOKENS) == STATE  # and the entry itself kept
    states.path("a" * 64).unlink()  # evicted: the name of it goes at its next use
    assert states.load("b" * 64, TOKENS[:100]) is None
    assert not states.contains("b" * 64)


def test_the_key_changes_with_the_model_settings_build_and_segments() -> None:
    base = state_key(["sha", {"batch_size": 512}, "build-1"], [(1, 2), (3,)])
    assert base != state_key(["sha2", {"batch_size": 512}, "build-1"], [(1, 2), (3,)])
    assert base != state_key(["sha", {"batch_size": 256}, "build-1"], [(1, 2), (3,)])
    assert base != state_key(["sha", {"batch_size": 512}, "build-2"], [(1, 2), (3,)])
    # the same tokens in other segments are batched otherwise: another state
    assert base != state_key(["sha", {"batch_size": 512}, "build-1"], [(1,), (2, 3)])


@pytest.mark.parametrize("damage", ["truncated", "altered", "foreign", "empty", "garbage"])
def test_a_damaged_or_foreign_file_is_ignored_and_deleted(tmp_path: Path, damage: str) -> None:
    states = store(tmp_path)
    key, other = "a" * 64, "b" * 64
    states.save(key, TOKENS, STATE)
    path = states.path(key)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[:-100])
    elif damage == "altered":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "foreign":  # a whole file, but another entry's
        states.save(other, TOKENS, STATE)
        os.replace(states.path(other), path)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"LOCALEVAL-KV-1\n" + b"\xff" * 64)
    assert states.load(key, TOKENS) is None
    assert not path.exists()


def test_least_recently_used_entries_are_evicted_first(tmp_path: Path) -> None:
    states = store(tmp_path)
    size = len(STATE) + 2000
    for number in range(3):
        states.save(f"{number:064x}", TOKENS, STATE)
    entry_size = states.path(f"{0:064x}").stat().st_size
    # an earlier process's entries: 0 used last, then 2, then 1
    for number, age in ((0, 10), (1, 30), (2, 20)):
        then = time.time() - 1000 - age
        os.utime(states.path(f"{number:064x}"), (then, then))
    later = StateStore(states.folder, entry_size * 3 + size // 2)
    assert later.save(f"{3:064x}", TOKENS, STATE)
    kept = {p.stem for p, _ in later._entries()}
    assert kept == {f"{n:064x}" for n in (0, 2, 3)}
    assert later.stats().size_bytes <= later.limit_bytes


def test_entries_this_process_uses_are_not_evicted_for_its_own(tmp_path: Path) -> None:
    """A set larger than the limit keeps its first states rather than evicting each before
    the next run reads it."""
    states = store(tmp_path)
    states.save("0" * 64, TOKENS, STATE)
    entry_size = states.path("0" * 64).stat().st_size
    small = StateStore(states.folder, entry_size + 10)
    assert small.load("0" * 64, TOKENS) == STATE  # used by this process now
    assert not small.save("1" * 64, TOKENS, STATE)
    assert small.load("0" * 64, TOKENS) == STATE
    assert not small.path("1" * 64).exists()


def test_a_state_larger_than_the_limit_is_not_kept(tmp_path: Path) -> None:
    states = store(tmp_path, limit=100)
    assert not states.save("0" * 64, TOKENS, STATE)
    assert states.stats().entries == 0 and list(states.folder.iterdir()) == []


def test_a_full_disk_skips_the_save_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    states = store(tmp_path)
    real_open = Path.open

    def full(self: Path, mode: str = "r", *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if "w" in mode:
            handle = real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]
            handle.close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", full)
    with caplog.at_level(logging.WARNING, logger="localeval.states"):
        assert not states.save("0" * 64, TOKENS, STATE)
        assert not states.save("1" * 64, TOKENS, STATE)
    notes = [r.getMessage() for r in caplog.records]
    assert len(notes) == 1 and "No space left on device" in notes[0], notes
    assert list(states.folder.iterdir()) == []  # no temporary file left behind


def _write_and_read(folder: str, rounds: int) -> int:
    """Save and read the same entry `rounds` times; how many reads were not the state."""
    states = StateStore(Path(folder), 10**9)
    wrong = 0
    for _ in range(rounds):
        states.save("c" * 64, TOKENS, STATE)
        if states.load("c" * 64, TOKENS) not in (STATE, None):
            wrong += 1
    return wrong


def test_two_processes_writing_the_same_entry_never_corrupt_it(tmp_path: Path) -> None:
    folder = tmp_path / "states"
    folder.mkdir()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        wrong = pool.starmap(_write_and_read, [(str(folder), 40), (str(folder), 40)])
    assert wrong == [0, 0]
    assert StateStore(folder, 10**9).load("c" * 64, TOKENS) == STATE
    assert [p.name for p in folder.iterdir()] == ["c" * 64 + ".kv"]


def test_the_store_is_in_the_user_cache_folder_and_a_zero_limit_keeps_none(
    tmp_path: Path,
) -> None:
    # conftest points XDG_CACHE_HOME at the test's folder
    assert states_folder() == Path(os.environ["XDG_CACHE_HOME"]) / "localeval" / "states"
    assert default_store(0) is None
    kept = default_store(2)
    assert kept is not None and kept.limit_bytes == 2 * 10**9


def test_cache_stats_shows_the_states_and_cache_clear_empties_them(tmp_path: Path) -> None:
    states = default_store()
    assert states is not None
    states.save("0" * 64, TOKENS, STATE)
    states.save("1" * 64, TOKENS, STATE, shorter=["2" * 64])
    runner = CliRunner()
    stats = runner.invoke(main, ["cache", "stats"])
    assert stats.exit_code == 0, stats.output
    assert "context states kept: 2 (0.0 MB" in stats.stdout
    assert str(states.folder) in stats.stdout
    cleared = runner.invoke(main, ["cache", "clear", "--yes"])
    assert cleared.exit_code == 0, cleared.output
    assert "and 2 context states." in cleared.stdout
    assert states.stats().entries == 0 and list(states.folder.iterdir()) == []


def test_the_limit_is_a_models_toml_setting_and_an_option(tmp_path: Path) -> None:
    source = load_models_config().source.read_text(encoding="utf-8")
    entry = '[judges."smollm2-135m"]\n'
    models_file = tmp_path / "models.toml"
    models_file.write_text(source.replace(entry, entry + "state_cache_gb = 0.5\n"))
    models = load_models_config(models_file)
    assert models.judge("smollm2-135m").settings.state_cache_gb == 0.5  # a decimal number
    assert models.judge().settings.state_cache_gb is None  # sized from the disk
    changed = models.with_judge_setting("state_cache_gb", 0)
    assert {j.settings.state_cache_gb for j in changed.judges.values()} == {0}
    for wrong in ("-1", "true", '"4"', "inf"):
        models_file.write_text(source.replace(entry, entry + f"state_cache_gb = {wrong}\n"))
        result = CliRunner().invoke(main, ["models", "--models", str(models_file)])
        assert result.exit_code == 2, wrong
        assert "'state_cache_gb' must be a number of GB" in result.output, wrong


def test_the_option_takes_a_decimal_number_of_gb(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "Q?", "contexts": ["A."], "answer": "A."}\n')
    args = ["evaluate", str(data), "-m", "bleu", "--estimate"]
    refused = CliRunner().invoke(main, [*args, "--state-cache-gb", "-0.5"])
    assert refused.exit_code == 2 and "--state-cache-gb" in refused.output
    taken = CliRunner().invoke(main, [*args, "--state-cache-gb", "0.5"])
    assert "--state-cache-gb" not in taken.output, taken.output


def test_without_a_limit_the_states_take_half_the_free_disk_up_to_a_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from localeval.backends import state_limit

    free = {"bytes": 50 * 10**9}
    monkeypatch.setattr(state_limit.shutil, "disk_usage", lambda _: shutil_usage(free["bytes"]))
    store = default_store()
    assert store is not None and store.limit_bytes == 25 * 10**9
    # 500 samples of 1,500 context tokens at the default judge's 28.7 KB a token fit
    assert store.limit_bytes >= 500 * 1500 * 28_700
    store.save("0" * 64, TOKENS, STATE)
    held = store.stats().size_bytes
    again = default_store()
    assert again is not None and again.limit_bytes == (50 * 10**9 + held) // 2
    free["bytes"] = 10**13  # a large disk: the ceiling
    assert default_store().limit_bytes == 64 * 10**9  # type: ignore[union-attr]


def shutil_usage(free: int) -> object:
    import shutil

    return shutil._ntuple_diskusage(2 * free, free, free)  # type: ignore[attr-defined]


def test_a_run_whose_states_did_not_fit_says_so_once_with_the_limit_to_keep_them_all(
    tmp_path: Path,
) -> None:
    store = StateStore(tmp_path / "s", 3 * len(STATE))
    assert store.room_note() is None
    kept = [store.save(f"{n}" * 64, TOKENS, STATE) for n in range(4)]
    assert kept == [True, True, False, False]  # this process's own states are not evicted
    note = store.room_note()
    assert note is not None
    assert note.startswith("context states: 2 of 4 kept; the rest did not fit the limit of")
    needed = float(note.split("A limit of ")[1].split(" GB")[0]) * 1e9
    assert needed >= store.stats().size_bytes + 2 * (store.stats().size_bytes // 2)


def test_a_folder_named_like_a_state_is_neither_counted_nor_removed(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s", 10**9)
    store.save("0" * 64, TOKENS, STATE)
    (store.folder / "x.kv").mkdir()
    assert store.stats().entries == 1
    assert store.clear() == 1
    assert store.stats().entries == 0 and (store.folder / "x.kv").is_dir()


def test_cache_stats_says_how_much_each_judges_states_take(tmp_path: Path) -> None:
    store = default_store()
    assert store is not None
    store.save("0" * 64, TOKENS, STATE, judge="qwen2.5-coder-1.5b")
    store.save("1" * 64, TOKENS, STATE, judge="qwen2.5-coder-1.5b")
    store.save("2" * 64, TOKENS, STATE, judge="smollm2-135m")
    store.save("3" * 64, TOKENS, STATE)  # a file from before states named their judge
    stats = store.stats()
    size = {p.name[:1]: p.stat().st_size for p in store.folder.glob("*.kv")}
    assert stats.by_judge == {
        "qwen2.5-coder-1.5b": (2, size["0"] + size["1"]),
        "smollm2-135m": (1, size["2"]),
        "": (1, size["3"]),
    }
    shown = CliRunner().invoke(main, ["cache", "stats"])
    assert shown.exit_code == 0, shown.output
    held = (size["0"] + size["1"]) / 1e6
    assert f"  judge qwen2.5-coder-1.5b: 2 states, {held:.1f} MB" in shown.stdout
    assert "  judge (not named: kept by an older localeval): 1 states" in shown.stdout


def test_the_quantized_cache_is_part_of_the_judge_s_identity_and_its_states_keys(
    tmp_path: Path,
) -> None:
    source = load_models_config().source.read_text(encoding="utf-8")
    entry = '[judges."smollm2-135m"]\n'
    models_file = tmp_path / "models.toml"
    variants = ["", 'type_k = "q8_0"\n', 'type_v = "q8_0"\nflash_attn = true\n']
    variants.append("flash_attn = true\n")
    identities = []
    for extra in variants:
        models_file.write_text(source.replace(entry, entry + extra))
        settings = load_models_config(models_file).judge("smollm2-135m").settings
        identities.append(judge_settings(settings))
    # the defaults leave the identity that judges had before these settings existed
    assert not {"type_k", "type_v", "flash_attn"} & identities[0].keys()
    assert identities[1]["type_k"] == "q8_0" and identities[2]["type_v"] == "q8_0"
    keys = {state_key(["sha", ident, "build"], [(1, 2)]) for ident in identities}
    assert len(keys) == len(variants)  # a state kept under one setting is never another's

    store = StateStore(tmp_path / "states", 10**6)
    f16, q8 = (state_key(["sha", ident, "build"], [(1, 2)]) for ident in identities[:2])
    store.save(q8, [1, 2], b"q8_0 cells")
    assert store.load(f16, [1, 2]) is None and store.load(q8, [1, 2]) == b"q8_0 cells"
