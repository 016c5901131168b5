"""Turning run results into files and text people and tools read: the terminal's text,
HTML, Markdown and JUnit (`localeval.report()`, the Python API's call, renders through
`render.py`)."""
