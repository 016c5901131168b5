"""locks/ agrees with pyproject.toml: every dependency pinned within its range, none pinned
that pyproject no longer names. When this fails, run scripts/lock.sh."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from locks import LOCKS, Pin, normalise, read_pins  # noqa: E402

FIX = "pyproject.toml and locks/ disagree: run scripts/lock.sh"


def wanted(pyproject: dict[str, object], extras: tuple[str, ...]) -> list[Requirement]:
    project = pyproject["project"]
    assert isinstance(project, dict)
    found = [Requirement(text) for text in project["dependencies"]]
    for extra in extras:
        found += [Requirement(text) for text in project["optional-dependencies"][extra]]
    return [r for r in found if normalise(r.name) != "localeval"]


def disagreements(requirements: list[Requirement], pins: dict[str, Pin]) -> list[str]:
    """What the lock gets wrong about these requirements, in words (empty when nothing)."""
    problems = []
    for requirement in requirements:
        pin = pins.get(normalise(requirement.name))
        if pin is None:
            problems.append(f"{requirement.name} is not in the lock")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{requirement.name}=={pin.version} is outside {requirement}")
        elif not pin.hashes:
            problems.append(f"{requirement.name} has no sha256")
    named = {normalise(r.name) for r in requirements}
    for pin in pins.values():
        # a package there only because pyproject asked for it, which it no longer does
        only_ours = "# via localeval (pyproject.toml)" in pin.text
        if only_ours and pin.name not in named:
            problems.append(f"{pin.name} is locked but pyproject.toml no longer asks for it")
    return problems


LOCK_FILES = sorted(LOCKS.glob("*/base.txt")) + sorted(LOCKS.glob("*/test.txt"))


def test_the_locks_of_this_machine_exist() -> None:
    assert (LOCKS / "linux-x86_64-py3.11-cpu" / "test.txt").is_file()
    assert len(LOCK_FILES) >= 8


@pytest.mark.parametrize("lock", LOCK_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lock_agrees_with_pyproject(lock: Path) -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = ("test", "ray") if lock.name == "test.txt" else ()
    problems = disagreements(wanted(pyproject, extras), read_pins(lock))
    assert problems == [], f"{FIX}: {'; '.join(problems)}"


def test_torch_is_the_cpu_build_on_linux_cpu_targets() -> None:
    for lock in LOCKS.glob("linux-*-cpu/test.txt"):
        pins = read_pins(lock)
        assert pins["torch"].version == "2.13.0+cpu", lock
        assert not [name for name in pins if name.startswith("nvidia-")], lock


def test_a_disagreement_is_named() -> None:
    """The check itself: an added dependency, a pin its range excludes, a removed one."""
    lock = LOCKS / "linux-x86_64-py3.11-cpu" / "base.txt"
    pins = read_pins(lock)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    requirements = wanted(pyproject, ())
    assert disagreements(requirements, pins) == []
    added = [*requirements, Requirement("left-pad>=1")]
    assert disagreements(added, pins) == ["left-pad is not in the lock"]
    narrowed = [r if r.name != "click" else Requirement("click>=99") for r in requirements]
    assert disagreements(narrowed, pins) == [f"click=={pins['click'].version} is outside click>=99"]
    removed = [r for r in requirements if r.name != "pypdf"]
    assert disagreements(removed, pins) == [
        "pypdf is locked but pyproject.toml no longer asks for it"
    ]
