"""What every metric shares: its result type, the tools it is given, field checks, and the
`MetricSpec` by which a metric module describes itself to the rest of localeval."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from localeval.data.samples import Sample
from localeval.embedder import Embedder
from localeval.judge import Judge
from localeval.prompts.sets import DEFAULT_PROMPTS, PROMPT_SETS, PromptSet
from localeval.verdict_maps import VerdictMap


@dataclass
class MetricResult:
    """A metric's score for one sample, with its evidence.

    `score` is None when the metric is undefined for the sample; `reason` then says why.
    """

    score: float | None
    details: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

    @classmethod
    def undefined(cls, reason: str, **details: Any) -> MetricResult:
        return cls(None, dict(details), reason)


@dataclass
class Tools:
    """The models a metric scores with, and how to read their verdicts: the judge and the
    embedder (either None when no requested metric needs it), the judge's thresholds,
    calibration maps and prompt set.

    Built by localeval.tools (`load_tools`, `tools_for`: from models.toml, behind the cache)
    or by hand (tests, a notebook); defined here, with the other terms of a metric, because
    every metric takes one and the metrics sit below localeval.tools in the layers
    (docs/architecture.md, "Where a metric's models come from")."""

    judge: Judge | None = None
    embedder: Embedder | None = None
    #: per metric, where a statement's verdict label flips on the judge's scale: the
    #: judge's thresholds in models.toml (a small judge's probabilities are compressed);
    #: 0.5, the likelier answer, for metrics without one
    verdict_thresholds: Mapping[str, float] = field(default_factory=dict)
    #: per kind of verdict ("supported", "answers"), the judge's calibration map; a verdict
    #: of a kind without one is the judge's raw P(Yes)
    calibration: Mapping[str, VerdictMap] = field(default_factory=dict)
    #: every wording said to this judge: its models.toml entry's prompt set (the default
    #: set for a judge given without an entry)
    prompts: PromptSet = PROMPT_SETS[DEFAULT_PROMPTS]

    def calibrated(self, kind: str, probability: float) -> float:
        """A verdict on the calibrated scale: the probability that a person would say yes."""
        found = self.calibration.get(kind)
        return probability if found is None else found.apply(probability)


class Metric(Protocol):
    """A metric scores one sample from the fields it names in `needs`."""

    name: str
    needs: tuple[str, ...]
    uses_judge: bool
    uses_embedder: bool

    def score(self, sample: Sample, tools: Tools) -> MetricResult: ...


def public_settings(metric: object) -> dict[str, Any]:
    """The settings a metric records by default: its public attributes that are plain
    values (str, int, float, bool; None is left out), sorted by name."""
    return {
        name: value
        for name, value in sorted(vars(metric).items())
        if not name.startswith("_") and isinstance(value, str | int | float | bool)
    }


@runtime_checkable
class MetricWithSettings(Protocol):
    """A metric that says which of its settings change its numbers: recorded with each run
    as `metric_settings`, they are part of the run's fingerprint (a run resumed, or compared,
    with other settings is another evaluation)."""

    def settings(self) -> Mapping[str, Any]:
        """Plain JSON values by name; the same for two metrics that score alike."""
        ...


class MetricBase:
    """What a metric class may inherit: `settings()` by default its public plain-valued
    attributes (public_settings); a metric whose attributes are not all settings says
    which are by overriding it."""

    def settings(self) -> dict[str, Any]:
        return public_settings(self)


@runtime_checkable
class ReadsBeyondNeeds(Protocol):
    """A metric whose score may also depend on fields outside `needs`, read when a sample
    has them (context precision judges the chunks against the answer when there is no
    reference): which fields this sample's score reads. `evaluate --until-decided` calls a
    metric unchanged by construction when these are the same in every pair."""

    def fields_read(self, sample: Sample) -> tuple[str, ...]:
        """The sample's fields (`question`, `contexts`, ...) this sample's score reads."""
        ...


def fields_read(metric: Metric, sample: Sample) -> tuple[str, ...]:
    """The sample's fields `metric`'s score of it depends on: its `needs`, unless it says
    it reads more (ReadsBeyondNeeds)."""
    return metric.fields_read(sample) if isinstance(metric, ReadsBeyondNeeds) else metric.needs


@runtime_checkable
class EmbedsByLanguage(Protocol):
    """A metric that uses the embedder for some languages only (context precision: the
    judge reads Chinese samples), so the run loads the embedder only when a sample needs it."""

    def embeds_in(self, language: str) -> bool:
        """Whether samples in `language` are embedded."""
        ...


Details = Mapping[str, Any]
#: (base details, new details) -> (weight, line) for each change worth saying
Explainer = Callable[[Details | None, Details | None], list[tuple[float, str]]]


@dataclass(frozen=True)
class Evidence:
    """Why a sample scored low: our words (`label`), and dataset text (`quote`) if any."""

    label: str
    quote: str | None = None

    def plain(self) -> str:
        return self.label if self.quote is None else f"{self.label}: {self.quote}"


@dataclass(frozen=True)
class EvidenceTable:
    """How a report shows a metric's evidence: a table of items with their verdict and
    probability, read from the metric's details."""

    #: what an item is called ("answer statement"); "chunk" rows are numbered chunks
    noun: str
    #: details key of the items ("" when the rows are the sample's chunks)
    items: str
    #: details key of each item's probability or similarity
    values: str
    #: the verdict shown as a failure ("" when items have no verdict)
    bad: str
    #: where failing items are marked in the sample's own text: "answer", "contexts", ""
    marks: str = ""
    #: details key of each item's verdict
    verdicts: str = "verdicts"


@dataclass(frozen=True)
class Note:
    """A sentence a report shows above a metric's evidence; `consumes`: details keys it
    says all there is to say about (not listed again)."""

    text: str
    low: bool = False
    consumes: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetricOption:
    """A command-line option of `localeval evaluate` that sets up this metric, named after
    it: --METRIC-OPTION, dest METRIC_OPTION (docs/decisions.md)."""

    flag: str  # "--rubric-criteria"
    dest: str  # the keyword `configure` receives it under, and `options=` of the API
    help: str
    metavar: str | None = None
    multiple: bool = False
    is_path: bool = False
    #: an on/off switch (`configure` receives True when it is given)
    is_flag: bool = False
    #: the flag and dest it had before options were named after their metric, still taken
    #: (hidden from --help, with a deprecation note) for a release
    old_flag: str | None = None
    old_dest: str | None = None


def no_options(values: Mapping[str, Any], requested: bool) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class MetricSpec:
    """Everything localeval needs to know about a metric, declared in its own module as
    `SPEC`: adding a metric is adding that module (see localeval.metrics)."""

    #: the metric class; its `needs`, `uses_judge`, `uses_embedder` are the inputs it takes
    build: type[Metric]
    #: what `localeval evaluate -m` help says about it ("" for the default set)
    help: str = ""
    #: where it is listed (the default set's order for the four RAG metrics)
    order: int = 1000
    #: its place in the default set, which is also the order that shares prompt prefixes
    #: best; None: not in the default set
    default_rank: int | None = None
    #: its default gate (docs/reference.md; None: no gate unless one is asked for), and what
    #: to say when a metric falls below its gate
    gate: float | None = None
    cause: str | None = None
    remedies: tuple[str, ...] = ()
    #: what changed in a sample's evidence between two runs (None: the detail fields that
    #: differ)
    explain: Explainer | None = None
    #: the first piece of evidence for why a sample scored low
    hint: Callable[[Details], Evidence | None] | None = None
    #: how reports lay out its evidence (None: as nested lists)
    table: EvidenceTable | None = None
    #: more evidence tables, shown after `table` (answer correctness' reference statements)
    extra_tables: tuple[EvidenceTable, ...] = ()
    notes: Callable[[Details], list[Note]] | None = None
    #: scores of its own that a sample's details hold ("rubric.accuracy": 0.78; {} for a
    #: sample without them), which every report lists and summarises beside its score
    sub_scores: Callable[[Details], dict[str, float | None]] | None = None
    #: its options, and how their values become the metric's constructor arguments
    #: (UsageError when they cannot); `requested`: whether the metric is evaluated at all
    options: tuple[MetricOption, ...] = ()
    configure: Callable[[Mapping[str, Any], bool], dict[str, Any]] = no_options
    #: the kind of judge verdict its score is made of ("supported", "answers"), which the
    #: judge's calibration map for that kind turns into probabilities a person agrees with
    verdict_kind: str | None = None
    #: the details key of those verdicts (a list, or one number), calibrated when the judge
    #: has a map; the judge's raw P(Yes) is then under the same key + "_raw"
    verdicts: str = ""
    #: for a metric whose score is made of judge verdicts for some samples only: which of
    #: its scores are, given the run's settings for it ("the chunks of Chinese samples";
    #: None: none are), and the details entry that says a sample's are (key, value)
    judged_part: Callable[[Mapping[str, Any]], str | None] | None = None
    judged_when: tuple[str, str] | None = None
    #: whether its score is on the judge's scale, so that a judge's own gate threshold
    #: (models.toml, or one `calibrate` suggests) applies to it; not for a score the
    #: embedder makes for some samples
    judge_gate: bool = True

    def raw_verdicts(self, details: Details) -> list[float] | None:
        """The judge's raw verdicts in a sample's details (None if it has none)."""
        if self.judged_when is not None:
            key, judged = self.judged_when
            if details.get(key) != judged:
                return None  # that sample was scored without the judge
        value = details.get(f"{self.verdicts}_raw", details.get(self.verdicts))
        if isinstance(value, int | float) and not isinstance(value, bool):
            return [float(value)]
        if isinstance(value, list) and all(isinstance(v, int | float) for v in value):
            return [float(v) for v in value]
        return None

    @property
    def name(self) -> str:
        return self.build.name

    @property
    def needs(self) -> tuple[str, ...]:
        return self.build.needs

    @property
    def uses_judge(self) -> bool:
        # whether it may, as for uses_embedder
        value = self.build.uses_judge
        return value if isinstance(value, bool) else True

    @property
    def uses_embedder(self) -> bool:
        # whether it may: a metric whose instances decide (a property) may
        value = self.build.uses_embedder
        return value if isinstance(value, bool) else True


#: where a verdict flips when the judge has no threshold of its own: the likelier answer
LIKELIER = 0.5


def verdict_label(
    probability: float, positive: str, negative: str, threshold: float = LIKELIER
) -> str:
    return positive if probability >= threshold else negative


_FIELD_WORDS = {
    "answer": "no answer",
    "contexts": "no contexts",
    "reference_answer": "no reference_answer",
    "question": "no question",
}


def missing_field(sample: Sample, needs: tuple[str, ...]) -> str | None:
    """The reason a sample cannot be scored for lack of a field, or None if all are present."""
    for name in needs:
        value = getattr(sample, name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return _FIELD_WORDS.get(name, f"no {name}")
    return None


def require_judge(tools: Tools) -> Judge:
    if tools.judge is None:
        raise RuntimeError("metric needs a judge but none was loaded")  # a runner bug
    return tools.judge


def require_embedder(tools: Tools) -> Embedder:
    if tools.embedder is None:
        raise RuntimeError("metric needs an embedder but none was loaded")  # a runner bug
    return tools.embedder
