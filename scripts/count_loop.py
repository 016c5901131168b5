"""Count, to the token, what the prompt-tuning loop's runs evaluate: version after version of
the same samples (each a new process in the real loop), with the context states each
version would keep served to the versions after it, and the verdicts each would cache
answering the later ones (docs/measurements/speed.md, "Contexts kept across runs").

It is `evaluate --estimate` (the judge's own code over its vocabulary, no weights; the
verdicts neutral) with one counting judge and one in-memory verdict cache for all the
versions: what a version would save is counted as kept for the next, so no version needs
to have been run. The judge's memory is emptied between versions, as a new process's is.
Nothing is written; start from a database and cache folder with nothing of these samples
in them (what they hold is read as the real runs would read it). The size limit is not
applied: every state the versions would save is counted as kept (`cache stats` after a
real run says whether they fit).

Usage: python scripts/count_loop.py JUDGE DB V1.jsonl V2.jsonl ...  (prints JSON)
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

from localeval.backends.llama_count import CountingLlamaJudge
from localeval.data.samples import read_samples
from localeval.engine import score_metric
from localeval.estimate.counting import Counting, Work
from localeval.evaluation.requests import EvaluationRequest
from localeval.evaluation.scoring import ScoringRun
from localeval.tools.cache import CachedJudge


def _counter(counting: Counting) -> CountingLlamaJudge | None:
    judge = counting.tools.judge
    counter = judge.inner if isinstance(judge, CachedJudge) else judge
    return counter if isinstance(counter, CountingLlamaJudge) else None


def _kept(counting: Counting) -> tuple[int, int]:
    """The states the versions so far would have written, and their tokens."""
    counter = _counter(counting)
    return (counter.kept_states, counter.kept_tokens) if counter else (0, 0)


def _spread(values: list[int]) -> dict[str, int]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {"min": ordered[0], "median": ordered[len(ordered) // 2], "max": ordered[-1]}


def count_versions(judge: str, db: Path, versions: list[Path]) -> list[dict[str, object]]:
    """Each version's judge calls, cached calls, prompt tokens evaluated, and the samples and
    tokens served from states, counted in turn."""
    request = EvaluationRequest(data=versions[0], judge=judge, db=db)
    with ScoringRun(request) as evaluation:
        metrics, models = evaluation.metrics, evaluation.models
    rows: list[dict[str, object]] = []
    with Counting(models, metrics, judge, None, db) as counting:
        for number, path in enumerate(versions, start=1):
            counter = _counter(counting)
            if counter is not None:
                counter.forget()  # what a new process's judge holds: nothing evaluated yet
            totals, restored, kept_before = Work(), [], _kept(counting)
            for sample in read_samples(path):
                item = f"v{number}/{sample.sample_id}"
                for metric in metrics:
                    scored = partial(score_metric, sample, metric, counting.tools)
                    counting.count(item, metric.name, scored)
                spent = counting.items[item]
                totals += spent
                restored += [spent.restored_tokens] if spent.restored_tokens else []
            # the judge is made on first use: read it again, not the one held before v1
            usage, kept_after = totals.usage, _kept(counting)
            rows.append(
                {
                    "version": path.name,
                    "judge_calls": usage.judge_calls,
                    "cached_calls": usage.cached_calls,
                    "prompt_tokens": usage.prompt_tokens,
                    "samples_from_states": len(restored),
                    "restored_prompt_tokens": totals.restored_tokens,
                    # a sample's tokens served from states: its shared part, restored once
                    "restored_per_sample": _spread(restored),
                    # what this version would write to disk (bytes: tokens x the judge's
                    # bytes per token, docs/measurements/speed.md)
                    "states_written": kept_after[0] - kept_before[0],
                    "state_tokens_written": kept_after[1] - kept_before[1],
                }
            )
    return rows


def main(argv: list[str]) -> None:
    if len(argv) < 3:
        raise SystemExit(__doc__.strip().splitlines()[-1] if __doc__ else "usage")
    rows = count_versions(argv[0], Path(argv[1]), [Path(p) for p in argv[2:]])
    print(json.dumps({"judge": argv[0], "versions": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
