"""Four rooms under one name (docs/architecture.md): the run history in the store, an
SQLite file or a PostgreSQL database (localeval.database: runs, records, leases, cleanup,
merging, copying, reading); `evaluate` as a library call (evaluation, requests, resume,
estimate); scoring on a Ray cluster (cluster, cluster_actor); and reviewers' labels
(labels, label_files, review_items). The judge/embedding cache shares the store but is
model access's (localeval.tools.cache)."""
