"""The corrected mean (localeval.prediction_powered) against the method's reference library,
ppi-python, and against what power tuning promises."""

from __future__ import annotations

import numpy as np
import pytest

from localeval.prediction_powered import (
    MIN_LABELLED,
    Z95,
    corrected_mean,
    labels_needed,
    power_tuning,
)


def _run(seed: int, n_all: int = 300, n_labelled: int = 40, noise: float = 0.15):
    """A run's judge scores (biased upwards by 0.1) and people's values on a random few."""
    rng = np.random.default_rng(seed)
    people_all = rng.uniform(0.2, 0.9, n_all)
    judge_all = np.clip(people_all + 0.1 + rng.normal(0, noise, n_all), 0, 1)
    labelled = rng.choice(n_all, n_labelled, replace=False)
    return judge_all, judge_all[labelled], people_all[labelled]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_ppi_python(seed: int) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    judge_all, judge_lab, people = _run(seed)
    found = corrected_mean(judge_all, judge_lab, people)
    # the same power tuning and point estimate as the reference library
    low, high = ppi_py.ppi_mean_ci(people, judge_lab, judge_all, alpha=0.05)
    theirs = ppi_py.ppi_mean_pointestimate(people, judge_lab, judge_all)
    assert found.mean == pytest.approx(float(np.squeeze(theirs)), abs=1e-12)
    assert found.mean == pytest.approx((float(low[0]) + float(high[0])) / 2, abs=1e-12)
    # ppi-python's variances divide by n, these by n - 1: a width between the two
    theirs_half = (float(high[0]) - float(low[0])) / 2
    half = (found.ci95[1] - found.ci95[0]) / 2
    n = len(people)
    assert theirs_half < half <= theirs_half * np.sqrt(n / (n - 1)) + 1e-12


def test_lam_one_is_plain_ppi_and_lam_zero_is_labels_only() -> None:
    judge_all, judge_lab, people = _run(4)
    plain = corrected_mean(judge_all, judge_lab, people, lam=1.0)
    assert plain.mean == pytest.approx(judge_all.mean() + (people - judge_lab).mean())
    none = corrected_mean(judge_all, judge_lab, people, lam=0.0)
    assert none.mean == pytest.approx(people.mean())
    assert none.ci95 == pytest.approx(none.labels_only_ci95)
    half = Z95 * people.std(ddof=1) / np.sqrt(len(people))
    assert none.labels_only_ci95 == pytest.approx((people.mean() - half, people.mean() + half))


def test_a_judge_that_agrees_narrows_and_one_that_does_not_is_never_wider() -> None:
    judge_all, judge_lab, people = _run(5, noise=0.05)
    good = corrected_mean(judge_all, judge_lab, people)
    assert good.judge_mean == pytest.approx(judge_all.mean())
    width = good.ci95[1] - good.ci95[0]
    assert width < 0.6 * (good.labels_only_ci95[1] - good.labels_only_ci95[0])
    # the bias (judge reads 0.1 high) is taken out: the estimate is near people's mean
    assert abs(good.mean - (good.judge_mean - 0.1)) < 0.03
    rng = np.random.default_rng(6)
    unrelated = rng.uniform(0, 1, len(judge_all))
    labelled = rng.choice(len(judge_all), 40, replace=False)
    people_random = rng.uniform(0, 1, 40)
    poor = corrected_mean(unrelated, unrelated[labelled], people_random)
    assert poor.lam < 0.3
    # wider than labels alone only by the judge term's noise, at most a few percent
    poor_width = poor.ci95[1] - poor.ci95[0]
    assert poor_width <= 1.05 * (poor.labels_only_ci95[1] - poor.labels_only_ci95[0])


def test_power_tuning_is_clipped_and_a_constant_judge_is_not_trusted() -> None:
    judge_all, judge_lab, people = _run(7)
    assert power_tuning(judge_all, judge_lab, 1 - people) == 0.0  # anti-correlated
    flat = np.full(100, 0.7)
    assert power_tuning(flat, flat[:30], np.linspace(0, 1, 30)) == 0.0
    assert 0 < power_tuning(judge_all, judge_lab, people) <= 1


def test_interval_stays_in_unit_range_and_too_few_labels_raise() -> None:
    found = corrected_mean([1.0] * 50, [1.0, 1.0, 1.0], [1.0, 1.0, 0.0])
    assert 0.0 <= found.ci95[0] <= found.ci95[1] <= 1.0
    with pytest.raises(ValueError, match="at least two"):
        corrected_mean([0.5, 0.6], [0.5], [1.0])
    assert labels_needed(0) == MIN_LABELLED
    assert labels_needed(MIN_LABELLED - 3) == 3
    assert labels_needed(MIN_LABELLED + 5) == 0


def test_as_dict_is_the_results_json_shape() -> None:
    judge_all, judge_lab, people = _run(8)
    shown = corrected_mean(judge_all, judge_lab, people).as_dict()
    assert set(shown) == {"mean", "ci95", "n_labelled", "judge_mean", "labels_only"}
    assert set(shown["labels_only"]) == {"mean", "ci95"}
    assert shown["n_labelled"] == 40
