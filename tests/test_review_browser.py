"""The review page in a real headless Chromium, served by `localeval review` itself (a
subprocess on a free port): labels made with keystrokes survive a reload, undo takes the
last one back, the export is what was clicked, and the whole demo can be gone through by
keyboard alone. Set LOCALEVAL_SCREENSHOTS=DIR to keep the screenshot (docs/review.png is
one)."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_runs import demo_copies, demo_copy, evaluate, label_everything, run_cli
from standins import StandIns
from test_report_browser import CHROMIUM, LAPTOP, LAUNCH_ARGS, keep

from localeval.labels.review_items import load_review_run

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent


class ReviewServer:
    """`localeval review latest` in a subprocess; `url` once it says where it serves."""

    def __init__(self, *args: str):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "localeval.cli", "review", "latest", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = ""
        deadline = time.monotonic() + 60
        while not self.url:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line.startswith("Open http://127.0.0.1:"):
                self.url = line.split()[1]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)

    def stop(self) -> int:
        """Ctrl-C, as a person stops it."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, launched as the HTML report's browser test launches it."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: run scripts/setup.sh (it installs Chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="run scripts/setup.sh")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def server(stand_ins: StandIns, tmp_path: Path) -> Iterator[ReviewServer]:
    evaluate(stand_ins, demo_copy(tmp_path))
    started = ReviewServer("--reviewer", "alice")
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait()


class Page:
    def __init__(self, browser: Any, url: str):
        self.context = browser.new_context(viewport=LAPTOP)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console",
            lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None,
        )
        self.url = url
        self.load()

    def load(self) -> None:
        self.page.goto(self.url, wait_until="load")
        self.page.wait_for_selector("body[data-ready]")
        self.saves = 0

    def press(self, *keys: str, saves: bool = True) -> None:
        """Press keys as a reviewer does; with `saves`, each one is a label or an undo, and
        the page has heard back for all of them before this returns."""
        for key in keys:
            self.page.keyboard.press(key)
        if saves:
            self.saves += len(keys)
            self.page.wait_for_selector(f"body[data-saves='{self.saves}']", timeout=20_000)

    def states(self) -> list[tuple[str, str]]:
        """(item, its label as shown) for the sample on screen."""
        rows = self.page.locator("tr.item")
        return [
            (
                rows.nth(i).get_attribute("data-item") or "",
                rows.nth(i).get_attribute("data-state") or "",
            )
            for i in range(rows.count())
        ]

    def progress(self) -> str:
        return self.page.locator("#progress").inner_text()

    def close(self) -> None:
        self.context.close()


def test_labels_by_keystroke_survive_a_reload_and_export_as_clicked(
    browser: Any, server: ReviewServer, tmp_path: Path
) -> None:
    page = Page(browser, server.url)
    try:
        first = page.states()
        # billing-1: three verdicts (faithfulness, context_recall, answer_relevancy), then
        # the three scores they make
        assert [item for item, _ in first][:1] == ['["billing-1","faithfulness",0]']
        assert len(first) == 6 and all(state == "" for _, state in first)
        page.press("w", "r", "r", "h", "r", "l")
        # the last label moved the selection on to the next sample; undo brings it back
        assert page.page.locator("main h2").inner_text().startswith("billing-2")
        page.press("u")
        assert page.page.locator("main h2").inner_text().startswith("billing-1")
        page.press("h")
        page.press("p", saves=False)  # back from billing-2, where that label moved on to
        marks = ["wrong", "right", "right", "too_high", "right", "too_high"]
        assert [state for _, state in page.states()] == marks
        assert page.progress() == "3 of 35 verdicts reviewed · 3 of 27 scores"
        shot = tmp_path / "review.png"
        page.page.locator("tr.item").nth(1).click()  # a verdict selected, as when reviewing
        page.page.screenshot(path=str(shot))
        keep(shot)
        page.load()  # a reload loses nothing
        assert [state for _, state in page.states()] == marks
        assert page.progress() == "3 of 35 verdicts reviewed · 3 of 27 scores"
        assert all(url.startswith(server.url) for url in page.requests), page.requests
        assert page.errors == []
    finally:
        page.close()
    result = run_cli("labels", "export", "latest")
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in result.stdout.splitlines()]
    items = [json.loads(item) for item, _ in first]
    clicked = [(s, m, v, mark) for (s, m, v), mark in zip(items, marks, strict=True)]
    assert [
        (r["sample_id"], r["metric"], r.get("text") is not None, r["mark"]) for r in exported
    ] == [(s, m, v is not None, mark) for s, m, v, mark in clicked]
    assert {r["reviewer"] for r in exported} == {"alice"}
    assert server.stop() == 0
    assert server.output[-1].strip().endswith("holds 6 current labels, 6 of them yours.")


def test_the_whole_demo_by_keyboard_alone(browser: Any, server: ReviewServer) -> None:
    page = Page(browser, server.url)
    try:
        # filters: a category, then lowest first
        page.page.select_option("#category", "billing")
        listed = page.page.locator("#samples li").all_inner_texts()
        assert [t.split()[0] for t in listed] == ["billing-1", "billing-2", "zh-billing-1"]
        page.page.select_option("#category", "")
        page.press("s", saves=False)
        assert page.page.locator("#samples li").count() == 8
        page.press("s", saves=False)  # back to the dataset's order
        started = time.monotonic()
        presses = 0
        while page.progress() != "35 of 35 verdicts reviewed · 27 of 27 scores":
            items = page.states()
            focused = page.page.locator("tr.item.focused").get_attribute("data-item") or ""
            is_score = json_item(focused)[2] is None
            page.press("h" if is_score else ("w" if presses % 4 == 0 else "r"))
            presses += 1
            assert presses <= 62, page.progress()
            assert items
        seconds = time.monotonic() - started
        assert presses == 62
        print(f"62 labels by keyboard in {seconds:.1f} s of page time")
        page.press("t", saves=False)  # not yet reviewed: nothing left but the sample on screen
        assert page.page.locator("#samples li").count() == 1
        assert page.errors == []
    finally:
        page.close()


def json_item(item: str) -> list[Any]:
    value: list[Any] = json.loads(item)
    return value


def test_labels_made_while_the_database_is_locked_are_kept_until_saved(
    browser: Any, server: ReviewServer
) -> None:
    """Another process holds the write lock for longer than the app waits: the labels made
    meanwhile stay on screen as not saved, the status says so (never "saved"), undo takes
    back one not sent yet, and once the lock is gone they are saved, in the order made."""
    db = Path(os.environ["LOCALEVAL_DB"])
    page = Page(browser, server.url)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\nprint('held', flush=True)\nsys.stdin.readline()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        page.press("w", "r", saves=False)
        status = page.page.locator("#status")
        page.page.wait_for_selector("#status.error", timeout=20_000)
        assert status.inner_text().startswith("2 labels not saved yet: database ")
        assert "is being written by another process" in status.inner_text()
        page.press("r", "u", saves=False)  # the third never reaches the app
        rows = page.page.locator("tr.item")
        shown = [
            (rows.nth(n).get_attribute("data-state"), rows.nth(n).get_attribute("data-unsaved"))
            for n in range(3)
        ]
        assert shown == [("wrong", "true"), ("right", "true"), ("", None)]
        page.page.wait_for_timeout(3000)  # a few tries, each refused while the lock is held
        assert status.inner_text().startswith("2 labels not saved yet: database ")
        assert page.progress().startswith("0 of 35 verdicts reviewed")
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.flush()
        holder.wait(timeout=10)
        page.saves += 2
        page.page.wait_for_selector(f"body[data-saves='{page.saves}']", timeout=30_000)
        assert status.inner_text() == "saved"
        items = page.states()[:3]
        assert [state for _, state in items] == ["wrong", "right", ""]
        assert page.page.locator("tr.item[data-unsaved]").count() == 0
        assert page.progress().startswith("2 of 35 verdicts reviewed")
        # the browser notes each refusal (503) in its console: nothing else
        assert {error.split(":")[0] for error in page.errors} == {"Failed to load resource"}
        assert all("503 (Service Unavailable)" in error for error in page.errors)
    finally:
        page.close()
        holder.kill()
        holder.wait()
    connection = sqlite3.connect(db)
    stored = connection.execute(
        "SELECT sample_id, metric, verdict, mark FROM run_labels ORDER BY id"
    ).fetchall()
    connection.close()
    made = [(*json_item(item), state) for item, state in items[:2]]
    assert [tuple(row) for row in stored] == made


#: a key press as the page takes it, timed inside the page: the handler, then the style and
#: layout of what it changed (what the next frame waits for)
TIME_KEY = """(key) => {
  const started = performance.now();
  document.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true }));
  document.body.getBoundingClientRect();
  return performance.now() - started;
}"""


@pytest.fixture
def big_server(stand_ins: StandIns, tmp_path: Path) -> Iterator[ReviewServer]:
    """The demo 250 times over (2,000 samples, 15,500 items), every item labelled by two
    other reviewers; served for a third."""
    evaluate(stand_ins, demo_copies(tmp_path, 2000))
    review = load_review_run("latest")
    assert len(label_everything(review, "bob") + label_everything(review, "carol")) == 31_000
    started = ReviewServer("--reviewer", "alice")
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait()


def test_a_key_press_on_a_run_of_2000_samples_takes_under_50_ms(
    browser: Any, big_server: ReviewServer
) -> None:
    """Each kind of key press, 9 times: the median of the page's own work for it is under
    50 ms (the whole list was drawn again on each one: 130-400 ms, more under load)."""
    page = Page(browser, big_server.url)
    try:
        assert page.progress() == "0 of 8750 verdicts reviewed · 0 of 6750 scores"
        taken: dict[str, list[float]] = {}
        for key in ["j", "k", "n", "p", "r", "s", "f", "t"] * 9:
            taken.setdefault(key, []).append(page.page.evaluate(TIME_KEY, key))
            if key == "r":  # the reply too is handled before the next key
                page.saves += 1
                page.page.wait_for_selector(f"body[data-saves='{page.saves}']", timeout=20_000)
        medians = {key: statistics.median(times) for key, times in taken.items()}
        print("median ms per key press:", {key: round(ms, 1) for key, ms in medians.items()})
        assert all(ms < 50 for ms in medians.values()), medians
        # each round comes back to the sample it left: its first verdict, labelled 9 times
        assert page.progress() == "1 of 8750 verdicts reviewed · 0 of 6750 scores"
        assert page.page.locator("#samples").get_attribute("data-listed") == "2000"
        assert page.errors == []
    finally:
        page.close()


def test_labelling_for_the_estimate_prints_the_formulas_corrected_mean(
    browser: Any, stand_ins: StandIns, tmp_path: Path
) -> None:
    """The demo's samples (six times over: more than the minimum) labelled on the real
    page in the "label for the estimate" order; the corrected faithfulness `runs show`
    prints then equals the PPI++ formula computed here from what was clicked."""
    import numpy as np

    from localeval.prediction_powered import MIN_LABELLED, Z95

    data = demo_copies(tmp_path, MIN_LABELLED + 8)
    evaluate(stand_ins, data, "-m", "faithfulness")
    review = load_review_run("latest")
    started = ReviewServer("--reviewer", "alice")
    page = Page(browser, started.url)
    try:
        page.press("e", saves=False)
        page.page.wait_for_selector("#corrected b")
        assert "0 complete samples from the start of this order" in page.page.inner_text(
            "#corrected"
        )
        visited, people = [], {}
        for _ in range(len(review.samples)):
            sample_id = page.page.inner_text("main h2").split()[0]
            visited.append(sample_id)
            verdicts = [v for v in review.verdicts[sample_id] if v.metric == "faithfulness"]
            # wrong on the first statement, right on the rest: people's value by hand
            marks = ["w"] + ["r"] * (len(verdicts) - 1)
            page.press(*marks)
            truth = [v.says_yes != (n == 0) for n, v in enumerate(verdicts)]
            people[sample_id] = sum(truth) / len(truth)
            page.press("n", saves=False)
        # a seeded order: not the file's, and the same on the next visit
        assert sorted(visited) == sorted(s["sample_id"] for s in review.samples)
        assert visited != [s["sample_id"] for s in review.samples]
        assert visited == review.estimate_order()
        page.load()
        page.press("e", saves=False)
        count = page.page.inner_text("#corrected")
        assert f"{len(visited)} complete samples from the start of this order" in count
        # the page shows the corrected mean too, as every summary does
        assert f"corrected by {len(visited)} labelled samples" in " ".join(count.split())
        assert page.errors == []
    finally:
        page.close()
        assert started.stop() == 0
    judge_all = np.array([s["scores"]["faithfulness"] for s in review.samples])
    judge_lab = np.array([review.score(s, "faithfulness") for s in visited])
    y = np.array([people[s] for s in visited])
    n, total = len(y), len(judge_all)
    assert n >= MIN_LABELLED
    # PPI++ written out again, independently of the module
    cov = np.mean((y - y.mean()) * (judge_lab - judge_lab.mean()))
    lam = min(1.0, max(0.0, cov / ((1 + n / total) * np.var(np.r_[judge_lab, judge_all], ddof=1))))
    mean = lam * judge_all.mean() + np.mean(y - lam * judge_lab)
    half = Z95 * np.sqrt(
        lam**2 * np.var(judge_all, ddof=1) / total + np.var(y - lam * judge_lab, ddof=1) / n
    )
    shown = " ".join(run_cli("runs", "show", "latest").output.split())
    low, high = max(0.0, mean - half), min(1.0, mean + half)
    assert f"faithfulness: {mean:.3f} [{low:.3f}, {high:.3f}] corrected by {n} labelled" in shown
