"""What a run produced: results.json, summaries, gates and comparisons."""
