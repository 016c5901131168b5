"""Progress with an ETA for long runs: a live bar on a terminal, periodic lines in a log."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click

from localeval.cli.options import silence_closed_stream
from localeval.reports.estimate_text import duration


class Progress:
    """Counts finished items out of `total` and shows how long the rest will take.

    Given `expected`, the estimated seconds of the work still to do (localeval.estimate.counting),
    the time left starts from it and is scaled, as items finish, by how long the finished
    ones took against their estimate (`advance(expected=...)`); without it, the time left is
    guessed from the items finished so far.
    """

    def __init__(
        self,
        total: int,
        label: str,
        enabled: bool = True,
        stream: TextIO | None = None,
        log_every_seconds: float = 30.0,
        resumed: int = 0,
        expected: float | None = None,
    ):
        self.total = total
        self.label = label
        #: items done before this process started (a resumed run): counted, but not timed
        self.resumed = resumed
        self.done = resumed
        self.enabled = enabled
        self.expected = expected
        self._expected_done = 0.0
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self._last_log = self.started
        self._log_every = log_every_seconds
        self._tty = enabled and self.stream.isatty()
        self._bar = None
        if self._tty:
            if resumed:
                label = f"{label} ({resumed} done before)"
            # the bar counts this process's work only, so its time left is right
            # with an estimate the time left is ours, shown after the bar
            self._bar = click.progressbar(
                length=total - resumed,
                label=label,
                show_eta=expected is None,
                show_pos=True,
                file=self.stream,
                item_show_func=None if expected is None else self._left_text,
            )
            self._bar.__enter__()

    def advance(self, count: int = 1, expected: float = 0.0) -> None:
        """`count` more items done, which were estimated to take `expected` seconds."""
        self.done += count
        self._expected_done += expected
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(count)
            return
        now = time.monotonic()
        if now - self._last_log >= self._log_every or self.done == self.total:
            self._last_log = now
            try:
                click.echo(self.line(now), file=self.stream)
            except BrokenPipeError:
                silence_closed_stream(self.stream)

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self.started
        percent = 100.0 * self.done / self.total if self.total else 100.0
        text = f"{self.label}: {self.done}/{self.total} ({percent:.0f}%)"
        if self.resumed:
            text += f", {self.resumed} done before"
        text += f", {duration(elapsed)}"
        remaining = self.left(elapsed)
        if remaining is not None and self.done < self.total:
            text += f", about {duration(remaining)} left"
        return text

    def left(self, elapsed: float) -> float | None:
        """Seconds left: the estimate's, scaled by how the work done so far compared with
        it; else from the items done so far (None before the first)."""
        new = self.done - self.resumed
        if self.expected is not None:
            remaining = max(0.0, self.expected - self._expected_done)
            if new > 0 and self._expected_done > 0:
                remaining *= elapsed / self._expected_done
            return remaining
        if new > 0:
            return elapsed / new * (self.total - self.done)
        return None

    def _left_text(self, _item: object = None) -> str:
        remaining = self.left(time.monotonic() - self.started)
        if remaining is None or self.done >= self.total:
            return ""
        return f"about {duration(remaining)} left"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
