"""localeval: offline evaluation of retrieval-augmented generation with local models."""

from __future__ import annotations

import os

# localeval never reaches the network while it evaluates. These switches make the
# Hugging Face libraries (used by sentence-transformers) load from local paths only and
# send no telemetry; they are forced (not defaulted) before any of those libraries can be imported.
for _name in (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_HUB_DISABLE_TELEMETRY",
    "DO_NOT_TRACK",
):
    os.environ[_name] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__version__ = "0.1.0"
