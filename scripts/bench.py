"""How much work an evaluation costs, and how close it is to what llama.cpp itself needs.

Runs the four RAG metrics with the default judge on a fixed sample (the bundled example and
the first rows of ../shared/bench/wikieval.context_relevance.jsonl, which carry contexts, a
reference and -- from the faithfulness file -- an answer), and prints per sample:

* judge calls, prompt tokens evaluated, tokens generated, seconds (cold: empty cache);
* the sample's own tokens: its question, contexts, answer and reference, plus each
  distinct instruction once -- the least any judge must read -- and the ratio of the
  tokens evaluated to that;

then the warm re-run of the same data (answered from the cache), peak memory, and the
overhead ratio: wall time divided by the time llama.cpp needs for the same number of
prompt and generated tokens at its raw speed on this machine, measured in the same run.

With --server, the same samples through the server judge instead: llama-cpp-python's
OpenAI-compatible server started on the judge's GGUF, the four metrics scored with 1 and
then 4 samples in flight (no cache), and for each the wall time, the requests sent, the
tokens the server reports, and how far the scores of the two runs are apart.

Usage: python scripts/bench.py [--rows N] [--judge NAME] [--ar-questions N] [--server]
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "bench"


def bench_samples(rows: int) -> list:  # type: ignore[type-arg]
    """The bundled example plus WikiEval rows joined into full samples."""
    from localeval.data.samples import Sample, load_samples

    samples = list(load_samples(ROOT / "examples" / "demo.jsonl"))
    relevance = [json.loads(line) for line in (BENCH / "wikieval.context_relevance.jsonl").open()]
    faithful = [json.loads(line) for line in (BENCH / "wikieval.faithfulness.jsonl").open()]
    answers = {r["question"]: r["answer"] for r in faithful if r["label"] == 1}
    for row in [r for r in relevance if r["label"] == 1][:rows]:
        samples.append(
            Sample(
                sample_id=row["id"],
                question=row["question"],
                contexts=row["contexts"],
                answer=answers.get(row["question"]),
                reference_answer=row["reference_answer"],
                category="wikieval",
            )
        )
    return samples


def own_tokens(judge, sample) -> int:  # type: ignore[no-untyped-def]
    """Tokens of the sample's own text plus each distinct instruction once."""
    from localeval.prompts import rag

    text = [sample.question, sample.answer or "", sample.reference_answer or ""]
    text += list(sample.contexts or [])
    count = sum(len(judge._tokenize(t, special=False)) for t in text if t)
    instructions = [
        rag.SYSTEM_JUDGE,
        *rag.context_says([], "").segments[-2:],
        rag.questions_for_answer("", 3, "en").segments[-1],
        rag.answer_noncommittal("", "", "en").segments[-1],
        rag.answer_answers("", "", "en").segments[-1],
    ]
    return count + sum(len(judge._tokenize(t, special=False)) for t in instructions)


def raw_speed(judge) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """llama.cpp's own prompt and generation speed (tokens/s) on this machine, now."""
    llm = judge._llm
    tokens = judge._tokenize("The quick brown fox jumps over the lazy dog. " * 60, special=False)
    tokens = tokens[:512]
    llm.n_tokens = 0
    judge._state.clear()
    started = time.perf_counter()
    llm.eval(tokens)
    prompt_speed = len(tokens) / (time.perf_counter() - started)
    started = time.perf_counter()
    for token in tokens[:32]:
        llm.eval([token])
    generation_speed = 32 / (time.perf_counter() - started)
    llm.n_tokens = 0
    return prompt_speed, generation_speed


def start_server(gguf: Path, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server on a free port of 127.0.0.1, answering; and its base_url."""
    from localeval.backends.server_http import Endpoint, wait_until_up

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)]
    command += ["--model_alias", "judge", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", "8192", "--n_threads", str(threads), "--n_threads_batch", str(threads)]
    process = subprocess.Popen([*command, "--verbose", "false"], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    # the server loads the model before it listens: an open port is a ready server
    if not wait_until_up(Endpoint(url), 120):
        process.kill()
        raise SystemExit("llama_cpp.server did not start")
    return process, url


def server_run(url: str, gguf: Path, samples: list[Any], concurrency: int) -> dict[str, Any]:
    """The four metrics on `samples` through the server judge: what it took."""
    from localeval.backends.fake import HashEmbedder
    from localeval.backends.openai import OpenAIBackend
    from localeval.engine import MemorySink, score_samples
    from localeval.metrics import DEFAULT_METRICS, Tools, build_metric

    backend = OpenAIBackend()
    table = {"base_url": url, "model": "judge", "chat_template": str(gguf)}
    judge = backend.load("server", backend.settings(table | {"concurrency": concurrency}, "", ROOT))
    metrics = [build_metric(m) for m in DEFAULT_METRICS]
    sink = MemorySink()
    started = time.perf_counter()
    # the embedder is a stand-in: what is measured is the judge
    tally = score_samples(samples, metrics, Tools(judge, HashEmbedder()), sink)
    wall = time.perf_counter() - started
    scores = [v for r in sink.results for v in r.scores().values()]
    return {"wall": wall, "requests": judge.counts.requests, "usage": tally.usage, "scores": scores}


def server_bench(args: argparse.Namespace) -> None:
    from localeval.config import load_models_config

    config = load_models_config().judge(args.judge)
    gguf = Path(config.settings.path)  # type: ignore[attr-defined]
    samples = bench_samples(args.rows)
    process, url = start_server(gguf, args.threads)
    try:
        print(f"{len(samples)} samples; llama_cpp.server on {gguf.name} ({args.threads} threads)")
        print(f"{'in flight':>9} {'wall s':>7} {'requests':>8} {'prompt tok':>10} {'gen tok':>7}")
        runs = {}
        for concurrency in (1, 4):
            runs[concurrency] = run = server_run(url, gguf, samples, concurrency)
            usage = run["usage"]
            print(
                f"{concurrency:>9} {run['wall']:>7.1f} {run['requests']:>8} "
                f"{usage.prompt_tokens:>10} {usage.generated_tokens:>7}"
            )
        apart = max(
            (abs(a - b) for a, b in zip(runs[1]["scores"], runs[4]["scores"], strict=True)
             if a is not None and b is not None),
            default=0.0,
        )  # fmt: skip
        print(f"largest score difference between the two runs: {apart:.4f}")
    finally:
        process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5, help="WikiEval rows to add (default 5)")
    parser.add_argument("--judge", default=None, help="judge name from models.toml")
    parser.add_argument(
        "--ar-questions",
        type=int,
        default=None,
        metavar="N",
        help="answer relevancy also writes N questions as evidence (evaluate's "
        "--answer-relevancy-questions)",
    )
    parser.add_argument("--server", action="store_true", help="bench the server judge")
    parser.add_argument("--threads", type=int, default=2, help="the server's threads")
    args = parser.parse_args()
    if args.server:
        server_bench(args)
        return

    from localeval.backends.llama_judge import LlamaJudge
    from localeval.config import load_models_config
    from localeval.engine import evaluate
    from localeval.metrics import DEFAULT_METRICS, build_metric, configure_metrics
    from localeval.tools import load_tools
    from localeval.tools.cache import cache_connection

    models = load_models_config()
    samples = bench_samples(args.rows)
    # --ar-questions N benches answer relevancy with its generated questions, as the
    # default did before they became opt-in
    options = configure_metrics(
        list(DEFAULT_METRICS), {"answer_relevancy_questions": args.ar_questions}
    )
    metrics = [build_metric(m, options) for m in DEFAULT_METRICS]
    with tempfile.TemporaryDirectory() as tmp, cache_connection(Path(tmp) / "bench.db") as db:
        tools = load_tools(models, metrics, args.judge, cache=db)
        print(f"{len(samples)} samples; judge {tools.judge.name}")  # type: ignore[union-attr]
        # models are loaded before the clock starts: loading is paid once per run, whatever
        # the data, and is reported on its own
        started = time.perf_counter()
        tools.judge._judge()  # type: ignore[union-attr]
        if tools.embedder is not None:
            tools.embedder.embed(["warm-up"])
        print(f"models loaded in {time.perf_counter() - started:.1f} s")
        print(
            f"{'sample':<24} {'calls':>5} {'prompt':>7} {'gen':>5} {'own':>6} "
            f"{'ratio':>5} {'seconds':>7}"
        )
        per_sample = []
        cold_started = time.perf_counter()
        for sample in samples:
            before = tools.judge.usage.snapshot()  # type: ignore[union-attr]
            started = time.perf_counter()
            evaluate([sample], DEFAULT_METRICS, tools, options=options)
            seconds = time.perf_counter() - started
            used = tools.judge.usage - before  # type: ignore[union-attr]
            inner = tools.judge._judge()  # type: ignore[union-attr]
            assert isinstance(inner, LlamaJudge)
            own = own_tokens(inner, sample)
            per_sample.append((used, own, seconds))
            print(
                f"{sample.sample_id[:24]:<24} {used.judge_calls:>5} {used.prompt_tokens:>7} "
                f"{used.generated_tokens:>5} {own:>6} {used.prompt_tokens / own:>5.2f} "
                f"{seconds:>7.1f}"
            )
        cold = time.perf_counter() - cold_started
        prompt_tokens = sum(u.prompt_tokens for u, _, _ in per_sample)
        generated = sum(u.generated_tokens for u, _, _ in per_sample)
        own_total = sum(o for _, o, _ in per_sample)
        prompt_speed, generation_speed = raw_speed(inner)
        needed = prompt_tokens / prompt_speed + generated / generation_speed
        ratios = [u.prompt_tokens / o for u, o, _ in per_sample]
        print(
            f"\ncold run: {cold:.1f} s; {prompt_tokens} prompt tokens evaluated for "
            f"{own_total} own tokens ({prompt_tokens / own_total:.2f}x; per-sample median "
            f"{statistics.median(ratios):.2f}x, max {max(ratios):.2f}x), {generated} generated"
        )
        print(
            f"llama.cpp raw speed here: {prompt_speed:.0f} prompt tok/s, "
            f"{generation_speed:.1f} generated tok/s -> {needed:.1f} s for the same tokens; "
            f"overhead ratio {cold / needed:.2f}"
        )

        warm_tools = load_tools(models, metrics, args.judge, cache=db)
        started = time.perf_counter()
        warm_run = evaluate(samples, DEFAULT_METRICS, warm_tools)
        warm = time.perf_counter() - started
        print(
            f"warm re-run: {warm:.2f} s, {warm_run.usage.judge_calls} judge calls, "
            f"{warm_run.usage.cached_calls} from cache; {cold / warm:.0f}x faster than cold"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
