"""The HTML report in a real headless Chromium: it requests nothing, and the chart shows.

Needs /usr/bin/chromium (scripts/setup.sh installs it) and the playwright package, which
drives that browser over the DevTools protocol and sees every request the page makes.
Set LOCALEVAL_SCREENSHOTS=DIR to keep the screenshots for a person to look at.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import report_data
from png import count_near, read_png

from localeval.reports.html import render_html

pytestmark = pytest.mark.browser

CHROMIUM = Path(os.environ.get("LOCALEVAL_CHROMIUM", "/usr/bin/chromium"))
#: what a locked-down headless run needs: no sandbox (root in CI), no GPU, and none of
#: Chromium's own background traffic, which would blur "no request leaves the page"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP = {"width": 1366, "height": 768}
RUN_STROKE = (0x1D, 0x4E, 0xD8)
THRESHOLD_RED = (0xDC, 0x26, 0x26)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: run scripts/setup.sh (it installs Chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="run scripts/setup.sh")
    with sync_api.sync_playwright() as playwright:
        # playwright starts it with a fresh, temporary profile (user data dir)
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True
        )
        yield chromium
        chromium.close()


class Visit:
    """A page opened from a file, with every request and console message it caused."""

    def __init__(self, browser: Any, path: Path, viewport: dict[str, int] = LAPTOP):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.requests: list[str] = []  # every request the page began, blocked ones too
        self.failed: dict[str, str] = {}
        self.console: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.context.on(
            "requestfailed", lambda request: self.failed.update({request.url: request.failure})
        )
        self.page.on("console", lambda message: self.console.append(message.text))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url, wait_until="load")
        self.page.wait_for_timeout(300)  # let any late load (fonts, lazy images) start

    def close(self) -> None:
        self.context.close()


def write_page(tmp_path: Path, html: str, name: str = "report.html") -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def keep(screenshot: Path) -> None:
    folder = os.environ.get("LOCALEVAL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(folder) / screenshot.name)


def test_no_request_leaves_the_page(browser: Any, tmp_path: Path) -> None:
    html = render_html(report_data.results(evil=True), report_data.baseline())
    visit = Visit(browser, write_page(tmp_path, html))
    try:
        assert visit.requests == [visit.url]
        assert visit.console == []  # no CSP violation: the page never even tried
        csp = visit.page.locator('meta[http-equiv="Content-Security-Policy"]')
        assert "default-src 'none'" in csp.get_attribute("content")
    finally:
        visit.close()
    # without its Content-Security-Policy the page still asks for nothing: the policy is a
    # second wall, not the only one
    bare = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    assert bare != html
    visit = Visit(browser, write_page(tmp_path, bare, "bare.html"))
    try:
        assert visit.requests == [visit.url]
    finally:
        visit.close()


def test_the_policy_blocks_what_would_load(browser: Any, tmp_path: Path) -> None:
    """Were markup ever to slip through, the page's policy would stop its requests."""
    html = render_html(report_data.results()).replace(
        "<main>", '<main><img src="http://127.0.0.1:9/pixel.png" alt="">', 1
    )
    visit = Visit(browser, write_page(tmp_path, html))
    try:
        pixel = "http://127.0.0.1:9/pixel.png"
        assert visit.requests == [visit.url, pixel]
        assert visit.failed == {pixel: "csp"}  # blocked by the page's policy, never sent
        assert any("Content Security Policy" in text for text in visit.console), visit.console
    finally:
        visit.close()


def test_radar_is_visible_on_a_laptop_screen(browser: Any, tmp_path: Path) -> None:
    html = render_html(report_data.results(), report_data.baseline())
    visit = Visit(browser, write_page(tmp_path, html))
    page = visit.page
    try:
        radar = page.locator("svg.chart.radar")
        box = radar.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 200
        # above the fold, whole
        assert box["x"] >= 0 and box["x"] + box["width"] <= LAPTOP["width"]
        assert box["y"] >= 0 and box["y"] + box["height"] <= LAPTOP["height"]
        # the run's polygon is what is painted at the chart's centre (nothing covers it)
        hit = page.evaluate(
            """() => { const r = document.querySelector('svg.chart.radar polygon.series-run')
                  .getBoundingClientRect();
                  const e = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                  return e.getAttribute('class'); }"""
        )
        assert hit == "series-run"
        # no sideways scrolling at laptop width
        assert page.evaluate("document.documentElement.scrollWidth") <= LAPTOP["width"]
        shot = tmp_path / "report-laptop.png"
        page.screenshot(path=str(shot))
        width, height, _ = read_png(shot.read_bytes())
        assert (width, height) == (LAPTOP["width"], LAPTOP["height"])
        keep(shot)
        chart = radar.screenshot()
        # drawn, not just laid out: the run's outline and the dashed red gate are there
        assert count_near(chart, RUN_STROKE, 30) > 300
        assert count_near(chart, THRESHOLD_RED, 30) > 80
    finally:
        visit.close()


def test_bars_for_two_metrics(browser: Any, tmp_path: Path) -> None:
    data = report_data.results(("faithfulness", "context_recall"))
    visit = Visit(browser, write_page(tmp_path, render_html(data)))
    try:
        bars = visit.page.locator("svg.chart.bars")
        box = bars.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 60
        assert count_near(bars.screenshot(), (0x25, 0x63, 0xEB), 20) > 500
    finally:
        visit.close()


def test_samples_expand_to_their_evidence(browser: Any, tmp_path: Path) -> None:
    visit = Visit(browser, write_page(tmp_path, render_html(report_data.results(evil=True))))
    page = visit.page
    try:
        first = page.locator("details.sample").first
        mark = first.locator("mark.unsupported").first
        assert not mark.is_visible()  # closed until clicked
        first.locator("summary").click()
        assert mark.is_visible()
        assert first.locator("li.useless").first.is_visible()
        # the evil sample's markup is shown as text, not run or drawn
        assert report_data.EVIL_ID in first.locator("summary").inner_text()
        assert page.locator("img, iframe, script").count() == 0
        shot = tmp_path / "report-sample-open.png"
        page.screenshot(path=str(shot), full_page=True)
        keep(shot)
        # the CSS-only filter hides the samples whose scores all meet their gates
        assert page.locator("details.sample:visible").count() == 4
        page.locator("label[for=only-low]").click()
        assert page.locator("details.sample:visible").count() == 3
    finally:
        visit.close()
