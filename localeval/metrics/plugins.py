"""Metrics from outside the package: an installed distribution adds one through the entry
point group `localeval.metrics`, each entry naming a module that declares `SPEC`, as the
built-in metric modules do (as `llm` finds its plugins):

    [project.entry-points."localeval.metrics"]
    policy_ids = "acme_checks.policy_ids"

`-m policy_ids` then gets the gates, `diff`, reports and the cache of the built-in ones
(a worked example: examples/metric-plugin/). A plugin that cannot be used is left out
with one line saying why (`problems`, by entry point name); the command line shows each
line as a warning, and naming that metric with -m stops with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint

from localeval import extensions
from localeval.metrics.base import MetricSpec

PLUGIN_GROUP = extensions.METRICS


@dataclass
class Plugins:
    """The plugins' metrics, and why each plugin that cannot be used is left out."""

    specs: list[MetricSpec] = field(default_factory=list)
    #: entry point name -> one line saying what is wrong with it
    problems: dict[str, str] = field(default_factory=dict)


def load_plugins(built_in: Collection[str], entries: Iterable[EntryPoint] | None = None) -> Plugins:
    """The metrics of the entry points of PLUGIN_GROUP (or of `entries`), each checked
    against the names of the built-in metrics."""
    listed = list(extensions.installed(PLUGIN_GROUP) if entries is None else entries)
    counts = Counter(entry.name for entry in listed)
    plugins = Plugins()
    for entry in listed:
        if counts[entry.name] > 1:
            values = ", ".join(sorted(e.value for e in listed if e.name == entry.name))
            plugins.problems[entry.name] = (
                f"metric plugin '{entry.name}' is declared by more than one entry point "
                f"({values}); uninstall all but one"
            )
            continue
        found = _spec(entry, built_in)
        if isinstance(found, MetricSpec):
            plugins.specs.append(found)
        else:
            plugins.problems[entry.name] = found
    return plugins


def _spec(entry: EntryPoint, built_in: Collection[str]) -> MetricSpec | str:
    """The entry's metric, or the line that says why it cannot be used."""
    where = f"metric plugin '{entry.name}' ({entry.value})"
    loaded, problem = extensions.load(entry, where)
    if problem is not None:
        return problem
    spec = loaded if isinstance(loaded, MetricSpec) else getattr(loaded, "SPEC", None)
    if not isinstance(spec, MetricSpec):
        return f"{where} defines no SPEC (a localeval.metrics.base.MetricSpec)"
    if spec.name in built_in:
        return f"{where} is named like the built-in metric '{spec.name}'; rename it"
    if spec.name != entry.name:
        return f"{where} declares the metric '{spec.name}': name the entry point after it"
    if spec.default_rank is not None:
        return (
            f"{where} asks for a place in the default set (default_rank): a plugin's metric "
            "runs when named with -m"
        )
    return options_problem(where, spec) or spec


def options_problem(where: str, spec: MetricSpec) -> str | None:
    """Why the plugin's command-line options cannot be used, if they cannot: each must be
    named after the metric (as the built-in metrics' are), so that none can take the flag
    or the value of `evaluate`'s own options or of another metric's."""
    flag, dest = f"--{spec.name.replace('_', '-')}-", f"{spec.name}_"
    names = [(o.flag, o.dest) for o in spec.options]
    # old spellings are options too: they could take another's as well
    names += [
        (o.old_flag or "", o.old_dest or "") for o in spec.options if o.old_flag or o.old_dest
    ]
    for option_flag, option_dest in names:
        if not option_flag.startswith(flag) or not option_dest.startswith(dest):
            return (
                f"{where} has the option {option_flag} ({option_dest}): a plugin's options "
                f"are named after its metric, {flag}... ({dest}...)"
            )
    return None
