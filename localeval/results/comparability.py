"""Why two runs' scores may differ for reasons other than the system under test: another
judge (file, or a server's URL, model and revision), its settings, calibration or what its
server reported, another embedder, prompt version, dataset or metric settings."""

from __future__ import annotations

from typing import Any

from localeval.prompts.sets import statement_mode_changes

#: what names a judge without a file: a server's model, as the run records it
_SERVED = ("base_url", "model", "revision")


def _model_label(model: Any) -> str:
    if not isinstance(model, dict):
        return "none"
    sha = model.get("sha256")
    if sha:
        return f"{model.get('name')} ({sha[:12]})"
    if model.get("model"):
        revision = f" revision {model['revision']}" if model.get("revision") else ""
        return f"{model.get('name')} ({model['model']}{revision} at {model.get('base_url')})"
    return str(model.get("name"))


def _same_model(a: Any, b: Any) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a == b
    if a.get("sha256") and b.get("sha256"):
        return bool(a["sha256"] == b["sha256"])
    if a.get("model") or b.get("model"):  # a server's judge: its URL, model and revision
        return all(a.get(key) == b.get(key) for key in _SERVED)
    return bool(a.get("name") == b.get("name"))


def _server_changes(base: Any, new: Any) -> str:
    """What a judge's server reported differently (its version, the file it serves)."""
    before = base.get("server") if isinstance(base, dict) else None
    after = new.get("server") if isinstance(new, dict) else None
    if not isinstance(before, dict) or not isinstance(after, dict) or before == after:
        return ""
    flat = [_flat(before), _flat(after)]
    return ", ".join(
        f"{key} {flat[0].get(key)!r} vs {flat[1].get(key)!r}"
        for key in sorted(flat[0].keys() | flat[1].keys())
        if flat[0].get(key) != flat[1].get(key)
    )


def _flat(report: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in report.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def comparability_warnings(
    base: dict[str, Any], new: dict[str, Any], metrics: list[str], new_answers: bool = False
) -> list[str]:
    """Why the two runs' scores may differ for reasons other than the system under test.
    `new_answers`: the runs are two answer versions of the same samples (--until-decided),
    so that their data files differ is expected, not warned."""
    warnings = _judge_warnings(base.get("judge"), new.get("judge"))
    if (
        base.get("embedder")
        and new.get("embedder")
        and not _same_model(base["embedder"], new["embedder"])
    ):
        warnings.append(
            f"the runs used different embedders ({_model_label(base['embedder'])} vs "
            f"{_model_label(new['embedder'])}): embedding-based scores are not comparable"
        )
    if prompts := _changed_prompts(base, new):
        versions = str(base.get("prompt_version")), str(new.get("prompt_version"))
        modes = statement_mode_changes(*versions, metrics)
        made = f"; statements made differently: {'; '.join(modes)}" if modes else ""
        warnings.append(
            f"the runs used different prompt versions ({prompts}{made}): their scores are not "
            "comparable"
        )
    base_data, new_data = base.get("dataset_sha256"), new.get("dataset_sha256")
    if base_data and new_data and base_data != new_data and not new_answers:
        warnings.append(
            f"the runs used different datasets (sha256 {base_data[:12]} vs {new_data[:12]}): "
            "samples are paired by sample_id, and a changed sample is not the same test"
        )
    base_settings = base.get("metric_settings") or {}
    new_settings = new.get("metric_settings") or {}
    for metric in metrics:
        before, after = base_settings.get(metric), new_settings.get(metric)
        if before is not None and after is not None and before != after:
            warnings.append(
                f"{metric} ran with different settings ({before} vs {after}): its scores are "
                "not comparable"
            )
    return warnings


def _judge_warnings(base: Any, new: Any) -> list[str]:
    """Why two runs' judges (their records) may score differently."""
    warnings = []
    if not _same_model(base, new):
        warnings.append(
            f"the runs used different judges ({_model_label(base)} vs "
            f"{_model_label(new)}): their scores are not comparable"
        )
    else:
        if changed := _changed_settings(base, new):
            warnings.append(
                f"the judge ran with different settings ({changed}): llama.cpp's numbers "
                "depend on them, so small differences may come from that"
            )
        if calibration := _changed_calibration(base, new):
            warnings.append(
                f"the judge's verdicts were calibrated differently ({calibration}): its scores "
                "are not comparable"
            )
    if reported := _server_changes(base, new):
        warnings.append(
            f"the judge's server reported differently ({reported}): a new server version or "
            "model file may score differently (declare a new revision in models.toml if the "
            "model changed)"
        )
    return warnings


def _changed_prompts(base: dict[str, Any], new: dict[str, Any]) -> str:
    """The two prompt versions, as "rag-3 vs rag-5", when both runs asked a judge and with
    different sets. A run that asked none records none (older ones, the default set's
    name, unasked): its scores depend on no wording, and a judge that one run used and the
    other did not is said as such."""
    before, after = base.get("prompt_version"), new.get("prompt_version")
    if not base.get("judge") or not new.get("judge") or before == after:
        return ""
    return f"{before or 'none'} vs {after or 'none'}"


def _changed_calibration(base: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """Which kinds of verdict were mapped differently, as "supported, answers" (a run
    without maps is uncalibrated)."""
    before = (base or {}).get("calibration") or {}
    after = (new or {}).get("calibration") or {}

    def line(entry: Any) -> Any:
        return (entry.get("a"), entry.get("b")) if isinstance(entry, dict) else entry

    return ", ".join(
        f"{kind} {'uncalibrated' if kind not in before else 'calibrated'} vs "
        f"{'uncalibrated' if kind not in after else 'calibrated'}"
        if (kind in before) != (kind in after)
        else kind
        for kind in sorted(before.keys() | after.keys())
        if line(before.get(kind)) != line(after.get(kind))
    )


def _changed_settings(base: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """The judge settings that differ, as "name before vs after, ..." (runs recorded before
    settings were have none: nothing is said about them)."""
    before, after = (base or {}).get("settings"), (new or {}).get("settings")
    if not before or not after:
        return ""
    return ", ".join(
        f"{name} {before.get(name)!r} vs {after.get(name)!r}"
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    )


def scored_alike(base: dict[str, Any], new: dict[str, Any], metric: str) -> bool:
    """Whether two runs (results.json's `run` objects) scored `metric` the same way: nothing
    comparability_warnings says of it, and nothing it passes over for being unknown (a
    judge's or embedder's settings, or the metric's, recorded by one run and not the
    other, as an older run's are not). Two versions of the same samples whose inputs to
    such a metric are the same in every pair cannot differ in it."""
    if comparability_warnings(base, new, [metric], new_answers=True):
        return False
    for role in ("judge", "embedder"):
        before, after = base.get(role), new.get(role)
        if (before is None) != (after is None):
            return False
        settings = [r.get("settings") if isinstance(r, dict) else None for r in (before, after)]
        if settings[0] != settings[1]:
            return False
    before = (base.get("metric_settings") or {}).get(metric)
    after = (new.get("metric_settings") or {}).get(metric)
    return before is not None and before == after
