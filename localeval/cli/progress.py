"""Progress with an ETA for long runs: a live bar on a terminal, periodic lines in a log."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Progress:
    """Counts finished items out of `total` and shows how long the rest will take."""

    def __init__(
        self,
        total: int,
        label: str,
        enabled: bool = True,
        stream: TextIO | None = None,
        log_every_seconds: float = 30.0,
        resumed: int = 0,
    ):
        self.total = total
        self.label = label
        #: items done before this process started (a resumed run): counted, but not timed
        self.resumed = resumed
        self.done = resumed
        self.enabled = enabled
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
            self._bar = click.progressbar(
                length=total - resumed, label=label, show_eta=True, show_pos=True, file=self.stream
            )
            self._bar.__enter__()

    def advance(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(count)
            return
        now = time.monotonic()
        if now - self._last_log >= self._log_every or self.done == self.total:
            self._last_log = now
            click.echo(self.line(now), file=self.stream)

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self.started
        percent = 100.0 * self.done / self.total if self.total else 100.0
        text = f"{self.label}: {self.done}/{self.total} ({percent:.0f}%)"
        if self.resumed:
            text += f", {self.resumed} done before"
        text += f", {_duration(elapsed)}"
        new = self.done - self.resumed
        if new > 0 and self.done < self.total:
            remaining = elapsed / new * (self.total - self.done)
            text += f", about {_duration(remaining)} left"
        return text

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
