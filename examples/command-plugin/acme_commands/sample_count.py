"""`localeval sample-count DATA`: how many samples a data file holds, per category. The
work is a library call (localeval's own reader, which checks every row as `evaluate`
does); the command only prints, as localeval's own commands do."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from localeval.data.samples import read_samples
from localeval.errors import LocalevalError


def count_by_category(data: Path) -> Counter[str]:
    """The data's samples per category ("-" for none)."""
    return Counter(sample.category or "-" for sample in read_samples(data))


@click.command("sample-count")
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def COMMAND(data: Path) -> None:
    """Count the samples in DATA, per category."""
    try:
        counts = count_by_category(data)
    except LocalevalError as exc:  # a bad row: one line and status 2, as localeval's own
        failed = click.ClickException(str(exc))
        failed.exit_code = 2
        raise failed from exc
    for category, count in sorted(counts.items()):
        click.echo(f"{category}\t{count}")
    click.echo(f"total\t{sum(counts.values())}")
