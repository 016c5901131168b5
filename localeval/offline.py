"""The switches that keep the Hugging Face libraries off the network.

localeval never reaches the network while it evaluates. `hold_offline` makes the libraries
that sentence-transformers uses load from local paths only and send no telemetry; it is
called where localeval's own process or model starts (the command line, the embedder's
loading), never on import, since the package is imported into other projects' processes
(the pytest plugin) whose settings are theirs.
"""

from __future__ import annotations

import os

#: forced to "1": a user's HF_HUB_OFFLINE=0 does not turn the network back on for localeval
OFFLINE_SWITCHES = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_HUB_DISABLE_TELEMETRY",
    "DO_NOT_TRACK",
)


def hold_offline() -> None:
    """Force the offline switches on; call it before the Hugging Face libraries are
    imported (huggingface_hub reads them once, when it is first imported)."""
    for name in OFFLINE_SWITCHES:
        os.environ[name] = "1"
    # the tokenizers' thread pool warns, or deadlocks, after a fork; a user's choice stands
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
