"""`localeval` with instant, deterministic models in place of the real ones, as a real
process: for tests that kill a run part-way, and for scripts/measure_memory.py.

FAKE_JUDGE_DELAY (seconds per judge call) slows the judge down so a kill lands mid-run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# this checkout's localeval, not an installed one, and the test helpers beside this file
sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).parent)]

from fakes import FakeEmbedder  # noqa: E402
from hashfakes import HashJudge  # noqa: E402

from localeval.cli import app, main  # noqa: E402
from localeval.metrics import Tools  # noqa: E402


class ForgetfulEmbedder(FakeEmbedder):
    """FakeEmbedder without its record of calls, which would grow with the run."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed(texts)
        self.calls.clear()
        return vectors


def fake_tools(*_args: object, **_kwargs: object) -> Tools:
    delay = float(os.environ.get("FAKE_JUDGE_DELAY", "0"))
    return Tools(judge=HashJudge(delay), embedder=ForgetfulEmbedder())


if __name__ == "__main__":
    app.load_tools = fake_tools  # type: ignore[assignment]
    main(prog_name="localeval")
