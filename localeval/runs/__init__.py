"""The run history, the judge/embedding cache and resuming, in the local SQLite database."""
