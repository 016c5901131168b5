"""scripts/llama_build.py: llama.cpp flags chosen from what the CPU reports, a build checked
by running it, and a crashing wheel thrown away and rebuilt (with fake llama_cpp packages
that really crash, in real subprocesses)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import load_script

ROOT = Path(__file__).resolve().parent.parent
CPUINFO = Path(__file__).resolve().parent / "cpuinfo"


lb = load_script("llama_build")


def flags_of(name: str) -> set[str]:
    return lb.parse_cpu_flags((CPUINFO / name).read_text())


AMD = flags_of("amd_epyc_avx2.txt")
XEON = flags_of("intel_xeon_sapphire_rapids_amx.txt")
LAPTOP = flags_of("intel_core_alder_lake_laptop.txt")


def options(build: object) -> dict[str, str]:
    """-DNAME=VALUE arguments as a dict."""
    return dict(arg[2:].split("=", 1) for arg in build.cmake_args)  # type: ignore[attr-defined]


# -- flag choice ----------------------------------------------------------------------------


def test_amd_epyc_without_avx512_builds_avx2_only() -> None:
    build = lb.choose_build("x86_64", "Linux", AMD, "cpu")
    got = options(build)
    assert got["GGML_NATIVE"] == "OFF"
    assert {k: got[k] for k in ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2")} == {
        "GGML_AVX": "ON",
        "GGML_AVX2": "ON",
        "GGML_FMA": "ON",
        "GGML_F16C": "ON",
        "GGML_BMI2": "ON",
    }
    for off in (
        "GGML_AVX512",
        "GGML_AVX512_VNNI",
        "GGML_AVX_VNNI",
        "GGML_AMX_TILE",
        "GGML_AMX_INT8",
    ):
        assert got[off] == "OFF", off
    assert build.description == ("x86-64: SSE42, AVX, AVX2, BMI2, FMA, F16C; no AVX-512; AMX off")


def test_intel_xeon_with_amx_gets_avx512_and_never_amx() -> None:
    build = lb.choose_build("x86_64", "Linux", XEON, "cpu")
    got = options(build)
    for on in (
        "GGML_AVX2",
        "GGML_AVX512",
        "GGML_AVX512_VBMI",
        "GGML_AVX512_VNNI",
        "GGML_AVX512_BF16",
        "GGML_AVX_VNNI",
    ):
        assert got[on] == "ON", on
    assert got["GGML_AMX_TILE"] == got["GGML_AMX_INT8"] == got["GGML_AMX_BF16"] == "OFF"
    assert "no AVX-512" not in build.description


def test_intel_laptop_has_avx_vnni_but_no_avx512() -> None:
    got = options(lb.choose_build("x86_64", "Linux", LAPTOP, "cpu"))
    assert got["GGML_AVX_VNNI"] == "ON"
    assert got["GGML_AVX512"] == "OFF"


def test_avx512_needs_every_subset_ggml_compiles_with() -> None:
    # avx512f alone (no bw/vl/dq/cd) would still die on -mavx512bw code
    flags = AMD | {"avx512f"}
    assert options(lb.choose_build("x86_64", "Linux", flags, "cpu"))["GGML_AVX512"] == "OFF"


def test_arm_uses_llama_cpp_defaults() -> None:
    flags = flags_of("arm_neoverse_n1.txt")
    assert "asimd" in flags
    build = lb.choose_build("aarch64", "Linux", flags, "cpu")
    assert build.cmake_args == ()
    assert build.description == "ARM64 Linux: llama.cpp's defaults"
    mac = lb.choose_build("arm64", "Darwin", set(), "cpu")
    assert mac.cmake_args == () and "Metal" in mac.description


def test_intel_mac_features_from_sysctl() -> None:
    flags = lb.mac_cpu_flags("FPU SSE SSE2 SSE4.2 AVX1.0 FMA F16C\nAVX2 BMI2 AVX512F")
    got = options(lb.choose_build("x86_64", "Darwin", flags, "cpu"))
    assert got["GGML_AVX"] == got["GGML_AVX2"] == got["GGML_SSE42"] == "ON"
    assert got["GGML_AVX512"] == "OFF"  # avx512f without the rest


def test_unreadable_cpu_features_stop_with_advice() -> None:
    with pytest.raises(SystemExit, match="set CMAKE_ARGS"):
        lb.choose_build("x86_64", "Linux", set(), "cpu")


def test_cuda_adds_the_gpu_backend_to_the_cpu_flags() -> None:
    build = lb.choose_build("x86_64", "Linux", AMD, "cuda")
    got = options(build)
    assert got["GGML_CUDA"] == "ON" and got["GGML_AVX2"] == "ON"
    assert build.key() != lb.choose_build("x86_64", "Linux", AMD, "cpu").key()


def fake_tool(folder: Path, name: str, output: str, status: int = 0) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\nexit {status}\n")
    path.chmod(0o755)
    return str(path)


def test_gpu_auto_detection(tmp_path: Path) -> None:
    smi = fake_tool(tmp_path, "nvidia-smi", "GPU 0: NVIDIA H200 (UUID: GPU-1)")
    nvcc = fake_tool(tmp_path, "nvcc", "Cuda compilation tools")
    tools = {"nvidia-smi": smi, "nvcc": nvcc}
    assert lb.choose_gpu("auto", tools.get) == "cuda"
    # a CUDA compiler without a GPU (as on these build machines) is no reason for CUDA
    assert lb.choose_gpu("auto", {"nvcc": nvcc}.get) == "cpu"
    broken = fake_tool(tmp_path, "nvidia-smi-broken", "NVIDIA-SMI has failed", status=9)
    assert lb.choose_gpu("auto", {"nvidia-smi": broken, "nvcc": nvcc}.get) == "cpu"
    assert lb.choose_gpu("cpu", tools.get) == "cpu"
    assert lb.choose_gpu("cuda", tools.get) == "cuda"
    with pytest.raises(SystemExit, match="needs the CUDA toolkit's nvcc"):
        lb.choose_gpu("cuda", {"nvidia-smi": smi}.get)
    with pytest.raises(SystemExit, match="must be auto, cpu or cuda"):
        lb.choose_gpu("rocm", tools.get)


# -- a crash is named as what it is ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sig", "words"),
    [(signal.SIGILL, "SIGILL (illegal instruction"), (signal.SIGSEGV, "SIGSEGV (segmentation")],
)
def test_crashes_are_named_by_their_signal(sig: signal.Signals, words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(sig)})"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert words in lb.describe_exit(done.returncode, done.stderr)


# -- fake llama_cpp packages: one that crashes on import, one that decodes -------------------

CRASHING = "import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n"
WORKING = """
class Llama:
    def __init__(self, model_path, **kwargs):
        self.n_tokens = 0
        self.scores = [[0.0, 1.0, 5.0]] * 64
    def tokenize(self, text, add_bos=True):
        return list(range(len(text.split())))
    def eval(self, tokens):
        self.n_tokens += len(tokens)
    def detokenize(self, tokens):
        return b" 18," if tokens == [2, 2, 2] else b"?"
"""
WRONG = WORKING.replace('b" 18,"', 'b" 12,"')


class FakeEnvironment:
    """A python that imports llama_cpp from a folder the fake installs write."""

    def __init__(self, root: Path):
        self.site = root / "site"
        (self.site / "llama_cpp").mkdir(parents=True)
        self.python = root / "python"
        launcher = f'#!/bin/sh\nPYTHONPATH="{self.site}" exec "{sys.executable}" "$@"\n'
        self.python.write_text(launcher)
        self.python.chmod(0o755)
        self.venv = root / "venv"
        self.venv.mkdir()
        self.model = root / "tiny.gguf"
        self.model.write_bytes(b"GGUF")
        self.built: list[str] = []
        self.installed: list[str] = []
        self.said: list[str] = []
        self.next_build = WORKING

    def build_wheel(self, python: str, build: object, into: Path) -> Path:
        wheel = into / f"llama_cpp_python-0.3.36-build{len(self.built)}.whl"
        wheel.write_text(self.next_build)
        self.built.append(wheel.name)
        return wheel

    def install_wheel(self, python: str, wheel: Path) -> None:
        (self.site / "llama_cpp" / "__init__.py").write_text(wheel.read_text())
        self.installed.append(wheel.name)

    def steps(self) -> object:
        return lb.Steps(
            build_wheel=self.build_wheel,
            install_wheel=self.install_wheel,
            verify=lambda python, model: lb.verify(str(self.python), model, timeout=60),
            say=self.said.append,
        )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeEnvironment:
    monkeypatch.setenv("LOCALEVAL_WHEEL_CACHE", str(tmp_path / "wheels"))
    return FakeEnvironment(tmp_path)


BUILD = lb.choose_build("x86_64", "Linux", AMD, "cpu")


def test_working_fake_passes_and_wrong_output_fails(env: FakeEnvironment) -> None:
    (env.site / "llama_cpp" / "__init__.py").write_text(WORKING)
    assert lb.verify(str(env.python), env.model).ok
    (env.site / "llama_cpp" / "__init__.py").write_text(WRONG)
    verdict = lb.verify(str(env.python), env.model)
    assert not verdict.ok
    assert verdict.what == "gave wrong output: after '... 16, 17,' it continues ' 12,'"


def test_a_cached_wheel_that_crashes_is_thrown_away_and_rebuilt(env: FakeEnvironment) -> None:
    cache = lb.wheel_cache(BUILD)
    cache.mkdir(parents=True)
    (cache / "llama_cpp_python-0.3.36-otherCPU.whl").write_text(CRASHING)

    lb.ensure(str(env.python), env.venv, BUILD, env.model, env.steps())

    assert env.installed == [
        "llama_cpp_python-0.3.36-otherCPU.whl",
        "llama_cpp_python-0.3.36-build0.whl",
    ]
    assert env.built == ["llama_cpp_python-0.3.36-build0.whl"]
    crash = next(line for line in env.said if "crashed" in line)
    assert crash.startswith("the llama-cpp-python build crashed with SIGILL (illegal instruction")
    assert "throwing that wheel away and building again from source, without caches" in env.said
    assert json.loads((env.venv / lb.MARKER).read_text())["key"] == BUILD.key()
    # the bad wheel is gone; the verified one is kept for the next set-up with these flags
    assert [p.name for p in cache.iterdir()] == ["llama_cpp_python-0.3.36-build0.whl"]


def test_a_build_that_crashes_twice_stops_with_what_to_try(env: FakeEnvironment) -> None:
    env.next_build = CRASHING
    with pytest.raises(SystemExit) as stopped:
        lb.ensure(str(env.python), env.venv, BUILD, env.model, env.steps())
    message = str(stopped.value)
    assert "built from source still crashed with SIGILL (illegal instruction" in message
    assert "-DGGML_AVX2=ON" in message and "to try: CMAKE_ARGS" in message
    assert len(env.built) == 2
    assert not (env.venv / lb.MARKER).exists()


def test_a_verified_build_with_this_cpus_flags_is_kept(env: FakeEnvironment) -> None:
    (env.site / "llama_cpp" / "__init__.py").write_text(WORKING)
    lb.write_marker(env.venv, BUILD)
    lb.ensure(str(env.python), env.venv, BUILD, env.model, env.steps())
    assert env.built == [] and env.installed == []


def test_a_build_for_other_flags_is_replaced(env: FakeEnvironment) -> None:
    (env.site / "llama_cpp" / "__init__.py").write_text(WORKING)  # works, but is not ours
    other = lb.choose_build("x86_64", "Linux", XEON, "cpu")
    lb.write_marker(env.venv, other)
    lb.ensure(str(env.python), env.venv, BUILD, env.model, env.steps())
    assert env.said[0].startswith("llama-cpp-python was built for another CPU or setting")
    assert env.built == ["llama_cpp_python-0.3.36-build0.whl"]
    assert json.loads((env.venv / lb.MARKER).read_text())["key"] == BUILD.key()


def test_an_installed_build_without_a_marker_is_rebuilt(env: FakeEnvironment) -> None:
    # flags unknown: it may be a wheel from pip's cache built for another machine
    (env.site / "llama_cpp" / "__init__.py").write_text(WORKING)
    lb.ensure(str(env.python), env.venv, BUILD, env.model, env.steps())
    assert env.built == ["llama_cpp_python-0.3.36-build0.whl"]
