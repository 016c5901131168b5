"""The hashed locks of locks/ (written by scripts/lock.sh): which one fits a machine, and what
each pins.

Standard library only: scripts/setup.sh and scripts/bundle.sh run it before anything is
installed.

Usage: python scripts/locks.py target [--platform P] [--python X.Y] [--gpu]
       python scripts/locks.py without NAME[,NAME] LOCK   (the lock's text less those packages)
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path

LOCKS = Path(__file__).resolve().parent.parent / "locks"
PLATFORMS = ("linux-x86_64", "linux-aarch64", "macos-arm64")
PYTHONS = ("3.11", "3.12")
#: what `pip download --platform` takes for each platform, newest first
PIP_PLATFORM_TAGS = {
    "linux-x86_64": [f"manylinux_2_{n}_x86_64" for n in range(28, 16, -1)]
    + ["manylinux2014_x86_64", "linux_x86_64"],
    "linux-aarch64": [f"manylinux_2_{n}_aarch64" for n in range(28, 16, -1)]
    + ["manylinux2014_aarch64", "linux_aarch64"],
    "macos-arm64": [f"macosx_{n}_0_arm64" for n in range(14, 10, -1)] + ["macosx_11_0_universal2"],
}
_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^ \\;]+)")


@dataclass(frozen=True)
class Pin:
    """One package of a lock: its name (normalised), version, hashes and the lines it holds."""

    name: str
    version: str
    hashes: tuple[str, ...]
    text: str


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def this_platform() -> str:
    """This machine's platform in locks/' words, or its own words where none fits."""
    system, machine = platform.system(), platform.machine().lower()
    name = {"Linux": "linux", "Darwin": "macos"}.get(system, system.lower())
    machine = {"amd64": "x86_64", "arm64": "aarch64" if name == "linux" else "arm64"}.get(
        machine, machine
    )
    return f"{name}-{machine}"


def target(platform_name: str, python: str, gpu: bool) -> str:
    """The lock folder's name; Apple silicon's GPU (Metal) is in its CPU build."""
    kind = "gpu" if gpu and not platform_name.startswith("macos") else "cpu"
    return f"{platform_name}-py{python}-{kind}"


def read_pins(lock: Path) -> dict[str, Pin]:
    """Each package of a lock file, by normalised name."""
    pins: dict[str, Pin] = {}
    entry: list[str] = []

    def close() -> None:
        if entry:
            match = _NAME.match(entry[0])
            if match is None:
                raise SystemExit(f"locks: cannot read {lock}: {entry[0]!r}")
            hashes = tuple(re.findall(r"--hash=sha256:([0-9a-f]{64})", "".join(entry)))
            name = normalise(match.group(1))
            pins[name] = Pin(name, match.group(3), hashes, "".join(entry))
            entry.clear()

    for line in lock.read_text(encoding="utf-8").splitlines(keepends=True):
        if line[:1].isalnum():
            close()
        if entry or line[:1].isalnum():
            entry.append(line)
    close()
    return pins


def without(lock: Path, names: set[str]) -> str:
    """The lock's requirements less the named packages."""
    wanted = {normalise(n) for n in names}
    return "".join(p.text for p in read_pins(lock).values() if p.name not in wanted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    which = sub.add_parser("target", help="the lock folder for a machine")
    which.add_argument("--platform", default=this_platform())
    which.add_argument("--python", default=f"{sys.version_info.major}.{sys.version_info.minor}")
    which.add_argument("--gpu", action="store_true")
    less = sub.add_parser("without", help="a lock's text less some packages")
    less.add_argument("names")
    less.add_argument("lock", type=Path)
    args = parser.parse_args()
    if args.command == "target":
        print(target(args.platform, args.python, args.gpu))
    else:
        sys.stdout.write(without(args.lock, set(args.names.split(","))))


if __name__ == "__main__":
    main()
