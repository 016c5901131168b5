"""The run history: runs and their samples kept in the store (an SQLite file or a PostgreSQL
database, localeval.database): a run's row and fingerprint (`records`), writing, listing and
opening the history (`store`: `RunStore`, `open_history`), reading a run back in pages
(`run_reads`), who is writing a run (`lease`), deleting and pruning runs (`cleanup`) and
copying them between stores (`copying`), and the output file of a call over
the history, checked before any work (`output`). Labels (localeval.labels) and the library calls
over runs (localeval.evaluation) stand on it; it stands on neither."""
