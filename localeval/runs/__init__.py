"""The run history and resuming, in the local SQLite database (localeval.database), and
`evaluate` as a library call; the judge/embedding cache in the same file is model access's
(localeval.tools.cache)."""
