"""The metrics' part of `localeval evaluate`'s options: the -m help listing them, and the
options each metric declares (--METRIC-OPTION), with their old spellings still taken,
hidden from --help, for a release."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from localeval.api.defaults import REGISTRY, MetricOption, metric_options, take_old_spellings
from localeval.cli.options import echo


def metric_help() -> str:
    """The -m help: the default set, then the other metrics with what each is."""
    default = [s.name for s in REGISTRY.values() if s.default_rank is not None]
    others: list[tuple[list[str], str]] = []
    for spec in REGISTRY.values():
        if spec.default_rank is not None:
            continue
        if others and others[-1][1] == spec.help:
            others[-1][0].append(spec.name)  # metrics that say the same are listed together
        else:
            others.append(([spec.name], spec.help))
    also = ", ".join(
        f"{', '.join(names)} ({note})" if note else ", ".join(names) for names, note in others
    )
    return f"Metric to compute; repeat for several. Default: {', '.join(default)}." + (
        f" Also: {also}." if also else ""
    )


def _click_option(option: MetricOption, flag: str, dest: str, hidden: bool) -> click.Option:
    """A metric's option as a click option under this flag and dest."""
    if option.is_flag:
        return click.Option([flag, dest], is_flag=True, help=option.help, hidden=hidden)
    return click.Option(
        [flag, dest],
        multiple=option.multiple,
        metavar=option.metavar,
        type=click.Path(path_type=Path) if option.is_path else None,
        default=None,
        help=option.help,
        hidden=hidden,
    )


def metric_params() -> list[click.Option]:
    """The options the metrics declare (e.g. the rubric's --rubric-criteria), as click
    options, then their old spellings, hidden."""
    declared = [option for _, option in metric_options()]
    params = [_click_option(o, o.flag, o.dest, hidden=False) for o in declared]
    for option in declared:
        if option.old_flag is not None and option.old_dest is not None:
            params.append(_click_option(option, option.old_flag, option.old_dest, hidden=True))
    return params


def given_metric_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics' option values by their current dest; each old spelling used is noted
    on stderr, one line."""
    taken, renamed = take_old_spellings(values)
    for option in renamed:
        echo(
            f"Deprecated: {option.old_flag} is now {option.flag}; the old name will be "
            "removed in a later release.",
            err=True,
        )
    return taken


class MetricsCommand(click.Command):
    """A command whose -m help lists the metrics and which takes the metrics' own options:
    both are added when it is first parsed or its help shown, not on import, so that
    `localeval --help` imports no metric plugin. They go after --min-defined."""

    completed = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self.completed:
            self.completed = True
            names = [param.name for param in self.params]
            for param in self.params:
                if param.name == "metrics" and isinstance(param, click.Option):
                    param.help = metric_help()
            at = names.index("min_defined") + 1 if "min_defined" in names else len(names)
            self.params[at:at] = metric_params()
        return super().get_params(ctx)
