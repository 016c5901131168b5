"""localeval's version, in the lowest layer: the run history records it with every run
and the HTML report prints it, below the package root, which sits above the Python API."""

from __future__ import annotations

__version__ = "0.1.0"
