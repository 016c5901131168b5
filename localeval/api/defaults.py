"""What the command line's options default to and the choices they offer, light to import
(no model library, none of the API's heavier modules): a command's --help is built from
these before any command runs. Each value is defined once, where the library uses it."""

from __future__ import annotations

from localeval.metrics import PLUGIN_PROBLEMS, REGISTRY, MetricOption, metric_options
from localeval.metrics import take_old_spellings as take_old_spellings
from localeval.results.decision import DEFAULT_MARGIN
from localeval.results.gates import AUTO, DEFAULT_MIN_DEFINED, GATE_ON
from localeval.testset.chunking import DEFAULT_CHUNK_TOKENS, MIN_CHUNK_TOKENS
from localeval.testset.filters import DEFAULT_MAX_OVERLAP, DEFAULT_MAX_SIMILARITY
from localeval.testset.generation import DEFAULT_MIX_TEXT
from localeval.testset.kinds import KINDS

__all__ = [
    "AUTO",
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_MARGIN",
    "DEFAULT_MAX_OVERLAP",
    "DEFAULT_MAX_SIMILARITY",
    "DEFAULT_MIN_DEFINED",
    "DEFAULT_MIX_TEXT",
    "GATE_ON",
    "KINDS",
    "MIN_CHUNK_TOKENS",
    "PLUGIN_PROBLEMS",
    "REGISTRY",
    "MetricOption",
    "metric_options",
    "take_old_spellings",
]
