"""Reviewers' labels of a run's verdicts and scores: kept in the history's store (`store`:
`LabelStore`, table `run_labels`), as files for git (`files`: `labels export`/`import`),
a stored run as a reviewer sees it (`review_items`), labels carried over from earlier runs
of the same samples (`carried`), and a run's means corrected by them (`corrected`). Above
the history (localeval.history), whose runs it labels."""
