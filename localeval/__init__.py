"""localeval: offline evaluation of retrieval-augmented generation with local models.

Importing the package changes nothing outside it: the offline switches of the Hugging Face
libraries are set where the embedder loads and where the command line starts
(localeval.offline), not here, so a project that merely has localeval installed (its
pytest plugin is imported in every test session) keeps its own settings.
"""

from __future__ import annotations

__version__ = "0.1.0"
