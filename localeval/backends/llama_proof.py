"""Whether the installed llama.cpp build works on this CPU, shown by using it: a tiny real
decode in a fresh process, whose crash (an instruction this CPU lacks) or wrong output is
named in words. scripts/llama_build.py proves a build with it at set-up, and `localeval
doctor` proves it again where the install now runs. Standard library only: the set-up
script imports it from the checkout before localeval is installed.
"""

from __future__ import annotations

import json
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Loads the GGUF, evaluates a prompt whose continuation any instruct model is sure of in
# one batch (prompt processing, where the SIMD kernels run), then decodes three tokens
# greedily one at a time (the generation path), and prints what came out. (Models that
# split numbers into digits continue " 1", "8", ","; others " 18", ",".)
VERIFY_SCRIPT = r"""
import json, sys
import numpy as np
import llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_batch=64, logits_all=True,
                      verbose=False)
llm.eval(llm.tokenize(b"1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,"))
llm.eval(llm.tokenize(b" 17,", add_bos=False))
finite, spread, out = True, 0.0, []
for _ in range(3):
    row = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
    finite = finite and bool(np.isfinite(row).all())
    spread = max(spread, float(row.max() - row.min()))
    out.append(int(row.argmax()))
    llm.eval(out[-1:])
text = llm.detokenize(out).decode("utf-8", "replace")
print(json.dumps({"finite": finite, "spread": spread, "continuation": text}))
"""
EXPECTED_NEXT = "18"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    #: what happened, in words: "works", "crashed with SIGILL (illegal instruction) ..."
    what: str


def describe_exit(returncode: int, stderr: str) -> str:
    """A failed verification in words, naming the signal of a crash."""
    if returncode < 0:
        number = -returncode
        name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
        why = {
            "SIGILL": "illegal instruction: the build uses an instruction this CPU lacks",
            "SIGSEGV": "segmentation fault in llama.cpp (its AMX path does this)",
            "SIGBUS": "bus error in llama.cpp",
            "SIGABRT": "llama.cpp aborted",
        }.get(name, "killed by a signal")
        return f"crashed with {name} ({why})"
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
    return f"failed with exit status {returncode}: {last}"


def verify(python: str, model: Path, timeout: float = 600) -> Verdict:
    """Run a tiny real decode with the installed llama_cpp in a fresh process."""
    try:
        done = subprocess.run(
            [python, "-c", VERIFY_SCRIPT, str(model)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Verdict(False, f"hung: no result after {timeout:.0f} s")
    if done.returncode != 0:
        return Verdict(False, describe_exit(done.returncode, done.stderr))
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Verdict(False, f"printed no result: {done.stdout[-200:]!r}")
    if not result["finite"] or result["spread"] <= 0:
        return Verdict(False, "gave wrong output: logits that are not finite or all equal")
    if not result["continuation"].strip().startswith(EXPECTED_NEXT):
        return Verdict(
            False,
            f"gave wrong output: after '... 16, 17,' it continues {result['continuation']!r}",
        )
    return Verdict(True, "works (decoded a test prompt; logits as expected)")
