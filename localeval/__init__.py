"""localeval: offline evaluation of retrieval-augmented generation with local models.

Importing the package changes nothing outside it: the offline switches of the Hugging Face
libraries are set where the embedder loads and where the command line starts
(localeval.offline), not here, so a project that merely has localeval installed (its
pytest plugin is imported in every test session) keeps its own settings.

    import localeval
    run = localeval.evaluate("examples/demo.jsonl")   # docs/usage.md, "In Python"
"""

from __future__ import annotations

import importlib
from typing import Any

from localeval.version import __version__ as __version__


def __getattr__(name: str) -> Any:
    # the Python API's names (localeval.api.NAMES), each imported on first use: `import
    # localeval` stays light (`localeval --help` and a pytest session load no model library)
    # (import_module, not `from localeval import api`, which would ask this function again)
    api = importlib.import_module("localeval.api")  # the root is the API's front door
    if name in api.NAMES:
        return getattr(api, name)
    raise AttributeError(f"module 'localeval' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), *importlib.import_module("localeval.api").NAMES])
