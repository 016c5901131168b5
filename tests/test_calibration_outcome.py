"""calibrate's policy as a library call: which fitted maps are kept, and that only those,
and only when asked, are saved into models.toml."""

from __future__ import annotations

from pathlib import Path

import pytest
from standins import JUDGE

from localeval.calibration.fit import HeldOut, KindFit
from localeval.calibration.outcome import BY_FOLD, check_save, keep_maps
from localeval.config import load_models_config
from localeval.errors import UsageError
from localeval.verdict_maps import VerdictMap

KEPT = KindFit(
    "supported",
    VerdictMap("supported", 2.0, 0.5),
    [HeldOut("a", 30, 0.2, 0.1), HeldOut("b", 30, 0.3, 0.1)],
    ece_raw=0.25,
    ece=0.1,
)
#: fitted on folds of one dataset, which is not enough in file mode
NOT_KEPT = KindFit(
    "answers",
    VerdictMap("answers", 1.5, 0.0),
    [HeldOut("a", 30, 0.2, 0.1)],
    0.2,
    0.1,
    scheme="5 folds of a",
)


def models_file(tmp_path: Path) -> Path:
    models = tmp_path / "models.toml"
    models.write_text(f'[judges."j"]\nbackend = "{JUDGE}"\n')
    return models


def test_only_the_maps_worth_applying_are_kept_and_saved(tmp_path: Path) -> None:
    models = models_file(tmp_path)
    kept = keep_maps({"supported": KEPT, "answers": NOT_KEPT}, "j", models, BY_FOLD)
    assert list(kept.maps) == ["supported"] and kept.saved == models.resolve()
    assert list(load_models_config(models).judge("j").calibration) == ["supported"]


def test_maps_are_not_saved_unless_asked_or_when_none_is_kept(tmp_path: Path) -> None:
    models = models_file(tmp_path)
    before = models.read_text()
    assert keep_maps({"supported": KEPT}, "j", None, BY_FOLD).saved is None
    none_kept = keep_maps({"answers": NOT_KEPT}, "j", models, BY_FOLD)
    assert none_kept.maps == {} and none_kept.saved is None
    assert models.read_text() == before


def test_save_needs_fit() -> None:
    check_save(fit=True, save=True)
    with pytest.raises(
        UsageError, match="save=True writes the maps fit=True fits; give fit=True too"
    ):
        check_save(fit=False, save=True)
