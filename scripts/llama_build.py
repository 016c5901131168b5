"""Build llama-cpp-python for the machine it runs on, and prove the build works by using it.

scripts/setup.sh runs this with the virtual environment's Python. It

1. chooses llama.cpp's CMake flags from what the CPU reports (`choose_build`);
2. reuses the installed build only if its marker file (.venv/localeval-llama-build.json)
   records the same flags, else installs a wheel built with them: from localeval's own
   wheel cache (one folder per flag set), or built from source with pip's wheel cache and
   any find-links folder ruled out, since either may hold a wheel built for another CPU;
3. verifies the installed build with a real decode in a subprocess (`verify`): load the
   smallest provisioned GGUF, evaluate a few tokens, read the logits. A crash or wrong
   output throws the wheel away and rebuilds from source once; a second failure stops with
   what crashed, the flags used and what to try.

Why explicit flags and not llama.cpp's runtime-dispatched CPU variants
(GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS): ggml looks for those variant libraries next to
the executable (python), in the current folder or in a folder fixed at compile time, not in
site-packages/llama_cpp/lib where the wheel puts them (ggml-backend-reg.cpp,
ggml_backend_load_best in llama-cpp-python 0.3.36), so an installed wheel finds no CPU
backend; and where it did find them it would pick the sapphirerapids variant on AMX CPUs,
whose AMX path crashes in llama_decode. Explicit flags also compile one variant instead of
about ten. Never GGML_NATIVE on x86-64: -march=native turns AMX on where the CPU has it.

Usage: python scripts/llama_build.py [--models models.toml] [--plan | --which-gpu]
Environment: LOCALEVAL_GPU=auto|cpu|cuda (default auto: CUDA where nvidia-smi lists a GPU),
CMAKE_ARGS (used as given instead of the chosen flags), LOCALEVAL_WHEEL_CACHE (the wheel
cache folder; default ~/.cache/localeval/llama-cpp-python).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

VERSION = "0.3.36"
PACKAGE = f"llama-cpp-python=={VERSION}"
MARKER = "localeval-llama-build.json"
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from localeval.backends import llama_proof  # noqa: E402

# a build is proven by using it (the library's, which `localeval doctor` runs too)
Verdict, describe_exit, verify = llama_proof.Verdict, llama_proof.describe_exit, llama_proof.verify
EXPECTED_NEXT = llama_proof.EXPECTED_NEXT  # what llama-server is proven with too

# GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw
# (ggml-cpu/CMakeLists.txt), so it needs all five; the AVX-512 extensions need it too.
AVX512 = ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")
# x86-64 CMake options and the /proc/cpuinfo flags each needs, in the order ggml lists them.
X86_OPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GGML_SSE42", ("sse4_2",)),
    ("GGML_AVX", ("avx",)),
    ("GGML_AVX2", ("avx2",)),
    ("GGML_BMI2", ("bmi2",)),
    ("GGML_FMA", ("fma",)),
    ("GGML_F16C", ("f16c",)),
    ("GGML_AVX_VNNI", ("avx_vnni",)),
    ("GGML_AVX512", AVX512),
    ("GGML_AVX512_VBMI", (*AVX512, "avx512vbmi")),
    ("GGML_AVX512_VNNI", (*AVX512, "avx512_vnni")),
    ("GGML_AVX512_BF16", (*AVX512, "avx512_bf16")),
)
# llama.cpp's AMX path crashes in llama_decode on the CPUs that have it: always off
ALWAYS_OFF = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")
# macOS reports its x86 features in upper case, some under other names
_MAC_NAMES = {
    "sse4.2": "sse4_2",
    "avx1.0": "avx",
    "fma": "fma",
    "avx512vnni": "avx512_vnni",
    "avx512bf16": "avx512_bf16",
    "avxvnni": "avx_vnni",
}


@dataclass(frozen=True)
class Build:
    """How to build llama-cpp-python here, and why."""

    cmake_args: tuple[str, ...]
    #: what the flags were chosen for, in words ("x86-64: AVX2, FMA, F16C; no AVX-512")
    description: str
    gpu: str  # "cpu" or "cuda"
    machine: str

    def key(self) -> str:
        """Names the flag set: the wheel cache folder and the marker compare on it."""
        text = json.dumps(
            [
                VERSION,
                self.machine,
                self.gpu,
                list(self.cmake_args),
                f"cp{sys.version_info.major}{sys.version_info.minor}",
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_cpu_flags(cpuinfo: str) -> set[str]:
    """The feature flags of the first processor in a /proc/cpuinfo text (x86 "flags",
    ARM "Features")."""
    for line in cpuinfo.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def mac_cpu_flags(sysctl_output: str) -> set[str]:
    """x86 features from `sysctl -n machdep.cpu.features machdep.cpu.leaf7_features`."""
    flags = set()
    for word in sysctl_output.split():
        word = word.lower()
        flags.add(_MAC_NAMES.get(word, word))
    return flags


def x86_cmake_args(flags: set[str]) -> tuple[tuple[str, ...], list[str]]:
    """CMake options for an x86-64 CPU with these flags, and the features turned on."""
    args = ["-DGGML_NATIVE=OFF"]
    enabled = []
    for option, needs in X86_OPTIONS:
        on = all(flag in flags for flag in needs)
        args.append(f"-D{option}={'ON' if on else 'OFF'}")
        if on:
            enabled.append(option.removeprefix("GGML_").replace("_", "-"))
    args += [f"-D{option}=OFF" for option in ALWAYS_OFF]
    return tuple(args), enabled


def choose_build(machine: str, system: str, cpu_flags: set[str], gpu: str) -> Build:
    """The flags for this platform: explicit instruction sets on x86-64, llama.cpp's own
    defaults elsewhere (-mcpu=native on ARM Linux, Metal on Apple silicon)."""
    machine = machine.lower()
    cuda = ("-DGGML_CUDA=ON",) if gpu == "cuda" else ()
    if machine in ("x86_64", "amd64"):
        args, enabled = x86_cmake_args(cpu_flags)
        if not enabled:
            raise SystemExit(
                "setup: could not read this CPU's features (no /proc/cpuinfo flags or sysctl "
                "output); set CMAKE_ARGS to the llama.cpp flags to build with"
            )
        avx512 = "AVX512" in enabled
        words = f"x86-64: {', '.join(enabled)}" + ("" if avx512 else "; no AVX-512")
        return Build(args + cuda, words + "; AMX off", gpu, machine)
    if machine in ("aarch64", "arm64"):
        where = "macOS (Metal)" if system == "Darwin" else system
        return Build(cuda, f"ARM64 {where}: llama.cpp's defaults", gpu, machine)
    return Build(cuda, f"{machine} {system}: llama.cpp's defaults", gpu, machine)


def build_for_this_machine(gpu: str) -> Build:
    """The build for this CPU and `gpu`: CMAKE_ARGS when the user gives them, else the flags
    choose_build picks from what the CPU reports (the wheel and llama-server alike)."""
    system, machine = platform.system(), platform.machine()
    if os.environ.get("CMAKE_ARGS"):
        return Build(tuple(os.environ["CMAKE_ARGS"].split()), "CMAKE_ARGS as given", gpu, machine)
    return choose_build(machine, system, read_cpu_flags(system), gpu)


def read_cpu_flags(system: str) -> set[str]:
    if system == "Linux":
        try:
            return parse_cpu_flags(Path("/proc/cpuinfo").read_text(errors="replace"))
        except OSError:
            return set()
    if system == "Darwin":
        found = subprocess.run(
            ["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"],
            capture_output=True,
            text=True,
            check=False,
        )
        return mac_cpu_flags(found.stdout)
    return set()


def choose_gpu(setting: str, which: Callable[[str], str | None] = shutil.which) -> str:
    """ "cuda" or "cpu" from LOCALEVAL_GPU: auto means CUDA where nvidia-smi lists a GPU (a
    CUDA compiler alone, as on many CI images, is no GPU)."""
    setting = (setting or "auto").lower()
    if setting not in ("auto", "cpu", "cuda"):
        raise SystemExit(f"setup: LOCALEVAL_GPU must be auto, cpu or cuda, not {setting!r}")
    if setting == "auto":
        smi = which("nvidia-smi")
        if smi is None:
            return "cpu"
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
        setting = "cuda" if listed.returncode == 0 and "GPU" in listed.stdout else "cpu"
    if setting == "cuda" and which("nvcc") is None:
        raise SystemExit(
            "setup: LOCALEVAL_GPU=cuda needs the CUDA toolkit's nvcc on PATH to build "
            "llama.cpp for the GPU (or set LOCALEVAL_GPU=cpu)"
        )
    return setting


# -- verifying a build by using it: localeval.backends.llama_proof, which `localeval
# doctor` runs too (stdlib only, so it is imported from the checkout before localeval is
# installed) ---------------------------------------------------------------------------


def smallest_gguf(models_file: Path) -> Path:
    """The smallest judge file in models.toml that is present."""
    raw = tomllib.loads(models_file.read_text(encoding="utf-8"))
    base = models_file.resolve().parent
    present = [
        path
        for table in (raw.get("judges") or {}).values()
        if (path := (base / table["path"]).resolve()).is_file()
    ]
    if not present:
        raise SystemExit(
            f"setup: no judge GGUF from {models_file} is present to check the llama.cpp build "
            "with (run scripts/provision_models.py)"
        )
    return min(present, key=lambda p: p.stat().st_size)


# -- building and installing --------------------------------------------------------------


def pip(python: str, *args: str, env: Mapping[str, str] | None = None) -> None:
    subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", *args],
        check=True,
        env=None if env is None else dict(env),
    )


def build_wheel(python: str, build: Build, into: Path) -> Path:
    """Compile llama-cpp-python from source with the build's flags into `into`."""
    env = dict(os.environ, CMAKE_ARGS=" ".join(build.cmake_args), FORCE_CMAKE="1")
    # --no-binary: never a prebuilt wheel from an index or find-links folder;
    # --no-cache-dir: never a wheel pip built earlier with other flags
    pip(
        python,
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-binary",
        "llama-cpp-python",
        "--no-cache-dir",
        "-w",
        str(into),
        PACKAGE,
        env=env,
    )
    (wheel,) = into.glob("llama_cpp_python-*.whl")
    return wheel


def install_wheel(python: str, wheel: Path) -> None:
    pip(python, "install", "--quiet", "--force-reinstall", "--no-deps", str(wheel))
    pip(python, "install", "--quiet", str(wheel))  # its dependencies, if any are missing


def cache_root() -> Path:
    """Where verified llama.cpp builds are kept: a folder per flag set (the wheels, and
    scripts/llama_server_build.py's llama-server binaries)."""
    default = Path.home() / ".cache" / "localeval" / "llama-cpp-python"
    return Path(os.environ.get("LOCALEVAL_WHEEL_CACHE") or default)


def wheel_cache(build: Build) -> Path:
    return cache_root() / build.key()


def read_marker(venv: Path) -> dict[str, object] | None:
    try:
        return json.loads((venv / MARKER).read_text())
    except (OSError, ValueError):
        return None


def write_marker(venv: Path, build: Build) -> None:
    record = {"version": VERSION, "key": build.key(), **asdict(build)}
    (venv / MARKER).write_text(json.dumps(record, indent=1) + "\n")


@dataclass
class Steps:
    """What `ensure` does to the outside world; tests replace these."""

    build_wheel: Callable[[str, Build, Path], Path] = build_wheel
    install_wheel: Callable[[str, Path], None] = install_wheel
    verify: Callable[[str, Path], Verdict] = verify
    say: Callable[[str], None] = lambda text: print(f"setup: {text}", flush=True)


def ensure(python: str, venv: Path, build: Build, model: Path, steps: Steps | None = None) -> None:
    """Leave a verified llama-cpp-python built with `build`'s flags in the environment."""
    steps = steps or Steps()
    marker = read_marker(venv)
    if marker is not None and marker.get("key") == build.key():
        verdict = steps.verify(python, model)
        if verdict.ok:
            steps.say(f"llama-cpp-python {VERSION} ({build.description}): {verdict.what}")
            return
        steps.say(f"the installed llama-cpp-python {verdict.what}; rebuilding")
    elif marker is not None:
        steps.say(
            f"llama-cpp-python was built for another CPU or setting "
            f"({marker.get('description')}); rebuilding for {build.description}"
        )
    cache = wheel_cache(build)
    for attempt in (1, 2):
        cached = sorted(cache.glob("llama_cpp_python-*.whl")) if attempt == 1 else []
        if cached:
            wheel = cached[-1]
            steps.say(f"installing llama-cpp-python from {wheel}")
        else:
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir(parents=True, exist_ok=True)
            steps.say(
                f"building llama-cpp-python {VERSION} for {build.description} "
                "(about 5-10 minutes on 2 cores)"
            )
            steps.say(f"CMAKE_ARGS={' '.join(build.cmake_args)}")
            with tempfile.TemporaryDirectory(prefix="localeval-llama-") as tmp:
                built = steps.build_wheel(python, build, Path(tmp))
                wheel = cache / built.name
                shutil.move(str(built), wheel)
        (venv / MARKER).unlink(missing_ok=True)
        steps.install_wheel(python, wheel)
        verdict = steps.verify(python, model)
        if verdict.ok:
            write_marker(venv, build)
            steps.say(f"llama-cpp-python {VERSION} ({build.description}): {verdict.what}")
            return
        steps.say(f"the llama-cpp-python build {verdict.what}")
        shutil.rmtree(cache, ignore_errors=True)  # never offer this wheel again
        if attempt == 1:
            steps.say("throwing that wheel away and building again from source, without caches")
    raise SystemExit(
        f"setup: llama-cpp-python {VERSION} built from source still {verdict.what}.\n"
        f"  flags: {' '.join(build.cmake_args) or '(llama.cpp defaults)'}\n"
        f"  checked with: {model}\n"
        "  to try: CMAKE_ARGS with fewer instruction sets (e.g. -DGGML_NATIVE=OFF "
        "-DGGML_AVX2=OFF -DGGML_AVX512=OFF) and run scripts/setup.sh again; "
        "LOCALEVAL_GPU=cpu if the GPU build is what fails"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=str(ROOT / "models.toml"))
    parser.add_argument("--plan", action="store_true", help="print the chosen flags and stop")
    parser.add_argument("--which-gpu", action="store_true", help="print cuda or cpu and stop")
    args = parser.parse_args()
    gpu = choose_gpu(os.environ.get("LOCALEVAL_GPU", "auto"))
    if args.which_gpu:
        print(gpu)
        return
    build = build_for_this_machine(gpu)
    if args.plan:
        print(f"{build.description}\nCMAKE_ARGS={' '.join(build.cmake_args)}")
        return
    venv = Path(sys.prefix)
    ensure(sys.executable, venv, build, smallest_gguf(Path(args.models)))


if __name__ == "__main__":
    main()
