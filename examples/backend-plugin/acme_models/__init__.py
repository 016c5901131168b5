"""Example backends for localeval: `word-overlap` (a judge) and `word-hash` (an embedder)."""
