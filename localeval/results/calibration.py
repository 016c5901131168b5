"""Whether a run's scores are calibrated: for each metric made of judge verdicts, whether
the judge had a map for that kind of verdict (then the score reads as the probability that
a person agrees) or not (then it is the judge's raw P(Yes), on that judge's own scale)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.metrics import spec


@dataclass(frozen=True)
class CalibrationStatus:
    """What a run's judge record says about the calibration of its metrics."""

    judge: str
    #: metrics whose verdicts the judge's maps calibrated, and those they did not
    calibrated: list[str]
    uncalibrated: list[str]
    #: the maps as the run recorded them, by kind of verdict
    maps: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: for a metric the judge scores only in part, which part ("the chunks of Chinese
    #: samples"), by metric
    parts: Mapping[str, str] = field(default_factory=dict)

    def named(self, metrics: Sequence[str]) -> str:
        """The metrics as a reader sees them: "faithfulness, context_precision (the chunks
        of Chinese samples)"."""
        return ", ".join(f"{m} ({self.parts[m]})" if m in self.parts else m for m in metrics)


def calibration_status(
    judge: Mapping[str, Any] | None,
    metrics: Sequence[str],
    settings: Mapping[str, Any] | None = None,
) -> CalibrationStatus | None:
    """None when no metric of the run is made of judge verdicts. `settings`: the run's
    metric settings, which say whether a metric judged by the judge in part did."""
    kinds: dict[str, str] = {}
    parts: dict[str, str] = {}
    for name in metrics:
        found = spec(name)
        if found is None or not found.verdict_kind:
            continue
        if found.judged_part is not None:
            own = (settings or {}).get(name)
            part = found.judged_part(own if isinstance(own, Mapping) else {})
            if part is None:
                continue  # the run's setting kept the judge out of this metric
            parts[name] = part
        kinds[name] = found.verdict_kind
    if judge is None or not kinds:
        return None
    maps = judge.get("calibration") or {}
    return CalibrationStatus(
        str(judge.get("name", "?")),
        [m for m, kind in kinds.items() if kind in maps],
        [m for m, kind in kinds.items() if kind not in maps],
        {k: v for k, v in maps.items() if isinstance(v, Mapping)},
        parts,
    )


def calibrated_on(status: CalibrationStatus) -> list[tuple[str, str]]:
    """(kind of verdict, what its map was fitted on) for the maps the run's metrics used,
    where the map says ("24 verdicts labelled by your team (demo), AUC 0.91")."""
    kinds = {found.verdict_kind for m in status.calibrated if (found := spec(m)) is not None}
    return [
        (kind, entry["fitted_on"])
        for kind, entry in sorted(status.maps.items())
        if kind in kinds and isinstance(entry.get("fitted_on"), str) and entry["fitted_on"]
    ]


def fitted_sentence(status: CalibrationStatus) -> str:
    """What the maps the run's metrics used were fitted on ("" where none says)."""
    fitted = "; ".join(f"{kind}: {text}" for kind, text in calibrated_on(status))
    return f"Calibrated on {fitted}." if fitted else ""


def calibration_sentence(status: CalibrationStatus) -> str:
    """One sentence for a summary or report, and what the maps were fitted on."""
    said = f" {fitted}" if (fitted := fitted_sentence(status)) else ""
    if not status.uncalibrated:
        return (
            f"Judge {status.judge} is calibrated: each verdict is the probability that a "
            "person would agree, so scores read as shares and the default gates apply." + said
        )
    return (
        f"Judge {status.judge} is not calibrated for {status.named(status.uncalibrated)}: "
        "those scores are the judge's own confidence, not the share of people who would "
        "agree; the mean corrected by your labels reads on people's scale (`localeval "
        "calibrate --fit` fits a map from labelled rows)." + said
    )
