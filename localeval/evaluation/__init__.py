"""The library calls a command makes over runs: `evaluate` (`scoring`: `ScoringRun`, with its
request, events and outcome in `requests`; what it checks of its inputs in `checks`;
resuming in `resume`; a comparison that stops when decided in `decided`; its estimate, a
thin caller of localeval.estimate, in `estimate`), a run the user names read with its
labels' corrections (`sources`), and shards merged into one run (`merge`). Scoring on a
Ray cluster is the `ray` room. Above the history and labels (localeval.history,
localeval.labels), which it reads and writes."""
