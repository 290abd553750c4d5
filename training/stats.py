"""Statistics over training seeds: every seed, the mean, the worst seed, an interval.

A learning result is a distribution over training runs, not one run. For one
agent config trained with several seeds and evaluated on the same episode set,
:func:`seed_statistics` reports each seed's score, their mean, the worst and best
seed, the interquartile mean, and a percentile bootstrap confidence interval of
the mean over seeds (``scipy.stats.bootstrap``, resampling seeds, as rliable's
interval estimates do over runs). For two configs (say a tuned one against the
hand-set one), :func:`seed_difference` reports the difference of the means with
its bootstrap interval (each config's seeds resampled on their own), rliable's
probability of improvement and the two-sided Mann-Whitney U test.

A success rate measured on a finite episode set has a second source of
uncertainty, the episode sample. :func:`wilson_interval` is the episode-only
interval of one agent's success rate (the Wilson score interval of a binomial
proportion); :func:`two_level_bootstrap` is the interval over seeds *and*
episodes (resample the seeds, then the episodes within each drawn seed);
:func:`episodes_for_half_width` is the episode-set size that keeps the Wilson
interval within a given half-width at a given success rate.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "SeedDifference",
    "SeedStatistics",
    "episodes_for_half_width",
    "seed_difference",
    "seed_statistics",
    "two_level_bootstrap",
    "wilson_interval",
]


def _json_dict(record: Any) -> dict[str, Any]:
    """A dataclass's fields as a JSON-friendly dict (tuples as lists)."""
    return {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(record).items()
    }


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")


def _percentile_interval(
    samples: tuple[np.ndarray, ...],
    statistic: Any,
    confidence: float,
    n_resamples: int,
    random_state: int,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over ``samples`` (each resampled on its own)."""
    result = stats.bootstrap(
        samples,
        statistic,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        paired=False,
        vectorized=True,
        random_state=np.random.default_rng(random_state),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@dataclasses.dataclass(frozen=True)
class SeedStatistics:
    """A score over training seeds.

    Attributes
    ----------
    seeds : tuple of int
        The training seeds, in the order of ``values``.
    values : tuple of float
        The score of each seed (e.g. its success rate on the evaluation set).
    mean, worst, best, iqm : float
        Mean, worst and best seed's value (the minimum and maximum of a score
        where higher is better, the other way round for a cost such as a
        distance), and interquartile mean (``scipy.stats.trim_mean`` with 25%
        cut at each end) of ``values``.
    ci_low, ci_high : float
        The percentile bootstrap confidence interval of the mean over seeds.
    confidence : float
        Its confidence level.
    """

    seeds: tuple[int, ...]
    values: tuple[float, ...]
    mean: float
    worst: float
    best: float
    iqm: float
    ci_low: float
    ci_high: float
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return _json_dict(self)


def seed_statistics(
    seeds: Sequence[int],
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    random_state: int = 0,
    higher_is_better: bool = True,
) -> SeedStatistics:
    """Summarise one score over training seeds.

    Parameters
    ----------
    seeds : sequence of int, length n
        The training seeds.
    values : sequence of float, length n
        The score of each seed.
    confidence : float
        Confidence level of the bootstrap interval, in ``(0, 1)``.
    n_resamples : int
        Bootstrap resamples.
    random_state : int
        Seed of the bootstrap (so a report is reproducible).
    higher_is_better : bool
        Whether a larger value is better (a success rate) or worse (a distance):
        decides which seed is the worst.

    Returns
    -------
    SeedStatistics

    Raises
    ------
    ValueError
        If ``seeds`` and ``values`` differ in length, are empty, or a value is
        not finite, or ``confidence`` is outside ``(0, 1)``.

    Notes
    -----
    With one seed the interval is that seed's value (there is nothing to
    resample); with identical values it is that value. The percentile method
    is used because it stays defined for such degenerate samples (BCa does not).
    """
    if len(seeds) != len(values):
        raise ValueError(f"seeds ({len(seeds)}) and values ({len(values)}) differ in length")
    if not len(values):
        raise ValueError("seed_statistics needs at least one seed")
    _check_confidence(confidence)
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"values must be finite, got {list(values)}")
    if x.size > 1 and np.ptp(x) > 0:
        low, high = _percentile_interval((x,), np.mean, confidence, n_resamples, random_state)
    else:
        low = high = float(x.mean())
    return SeedStatistics(
        seeds=tuple(int(s) for s in seeds),
        values=tuple(float(v) for v in x),
        mean=float(x.mean()),
        worst=float(x.min() if higher_is_better else x.max()),
        best=float(x.max() if higher_is_better else x.min()),
        iqm=float(stats.trim_mean(x, 0.25)),
        ci_low=low,
        ci_high=high,
        confidence=confidence,
    )


@dataclasses.dataclass(frozen=True)
class SeedDifference:
    """One score of a candidate config against a baseline config, over seeds.

    Attributes
    ----------
    candidate_values, baseline_values : tuple of float
        Each config's score per training seed (the two need not share seeds or
        their number: the runs are independent).
    difference : float
        ``mean(candidate) - mean(baseline)``.
    ci_low, ci_high : float
        Percentile bootstrap confidence interval of ``difference``, each
        sample resampled on its own.
    confidence : float
        Its confidence level.
    probability_of_improvement : float
        ``P(X > Y) + P(X = Y) / 2`` for ``X`` a candidate seed's score and
        ``Y`` a baseline seed's (rliable's probability of improvement, the
        Mann-Whitney U statistic over ``n * m``): 0.5 when neither is better.
    p_value : float
        Two-sided p-value of the Mann-Whitney U test (``scipy.stats.mannwhitneyu``;
        1.0 when every score is equal).
    """

    candidate_values: tuple[float, ...]
    baseline_values: tuple[float, ...]
    difference: float
    ci_low: float
    ci_high: float
    confidence: float
    probability_of_improvement: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return _json_dict(self)


def seed_difference(
    candidate: Sequence[float],
    baseline: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    random_state: int = 0,
) -> SeedDifference:
    """Compare one score of two configs over their training seeds.

    Parameters
    ----------
    candidate, baseline : sequence of float, lengths n and m
        The score of each seed of the candidate and the baseline config (higher
        is better, e.g. success rates on the same evaluation set).
    confidence : float
        Confidence level of the bootstrap interval, in ``(0, 1)``.
    n_resamples : int
        Bootstrap resamples.
    random_state : int
        Seed of the bootstrap (so a report is reproducible).

    Returns
    -------
    SeedDifference

    Raises
    ------
    ValueError
        If either sample is empty or holds a value that is not finite, or
        ``confidence`` is outside ``(0, 1)``.

    Notes
    -----
    The interval resamples each config's seeds independently
    (``scipy.stats.bootstrap`` with two samples, ``paired=False``): a seed
    number means nothing shared between two configs. With one seed in both,
    or no spread at all, the interval is the difference itself.
    """
    _check_confidence(confidence)
    x = np.asarray(candidate, dtype=np.float64)
    y = np.asarray(baseline, dtype=np.float64)
    for name, v in (("candidate", x), ("baseline", y)):
        if v.ndim != 1 or not v.size:
            raise ValueError(f"{name} must be a non-empty sequence of scores, got {v.tolist()}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} scores must be finite, got {v.tolist()}")
    difference = float(x.mean() - y.mean())
    spread = bool(np.ptp(np.concatenate([x, y])) > 0)
    if spread and (x.size > 1 or y.size > 1):

        def mean_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.mean(a, axis=axis) - np.mean(b, axis=axis)

        low, high = _percentile_interval(
            (x, y), mean_difference, confidence, n_resamples, random_state
        )
    else:
        low = high = difference
    if spread:
        test = stats.mannwhitneyu(x, y, alternative="two-sided")
        u, p_value = float(test.statistic), float(test.pvalue)
    else:
        u, p_value = 0.5 * x.size * y.size, 1.0
    return SeedDifference(
        candidate_values=tuple(float(v) for v in x),
        baseline_values=tuple(float(v) for v in y),
        difference=difference,
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        probability_of_improvement=u / (x.size * y.size),
        p_value=p_value,
    )


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a success rate measured on ``n`` episodes.

    Parameters
    ----------
    successes : int
        Successful episodes, ``0 <= successes <= n``.
    n : int
        Episodes, ``n >= 1``.
    confidence : float
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    low, high : float
        The interval's ends, in ``[0, 1]``.

    Raises
    ------
    ValueError
        If ``n < 1``, ``successes`` is outside ``[0, n]``, or ``confidence`` is
        outside ``(0, 1)``.

    Notes
    -----
    With ``p = successes / n`` and ``z`` the two-sided normal quantile, the
    interval is ``(p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. It is
    used for one agent's episode sample rather than a bootstrap over episodes
    because it stays informative at 0 % and 100 % (a bootstrap of 100 successes
    out of 100 gives the empty-width interval [100 %, 100 %]; Wilson gives
    [96.3 %, 100 %]) and its coverage stays close to nominal for the episode
    counts used here (Brown, Cai and DasGupta 2001), where the plain normal
    (Wald) interval does not.
    """
    _check_confidence(confidence)
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive number of episodes, got {n!r}")
    if int(successes) != successes or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n={n}], got {successes!r}")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # exact ends at p = 0 and p = 1 (the formula gives them up to round-off)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def episodes_for_half_width(
    success_rate: float, half_width: float, *, confidence: float = 0.95
) -> int:
    """The fewest episodes whose Wilson interval at ``success_rate`` is at most ``± half_width``.

    Parameters
    ----------
    success_rate : float
        The expected success rate, in ``[0, 1]``.
    half_width : float
        The largest acceptable half-width (0.03 for ±3 points), in ``(0, 0.5)``.
    confidence : float
        Confidence level, in ``(0, 1)``.

    Returns
    -------
    int
        The episode count ``n``: the interval of ``round(success_rate · n)``
        successes out of ``n`` has ``(high - low) / 2 <= half_width``.

    Raises
    ------
    ValueError
        If an argument is outside its range.
    """
    _check_confidence(confidence)
    if not 0.0 <= success_rate <= 1.0:
        raise ValueError(f"success_rate must lie in [0, 1], got {success_rate!r}")
    if not 0.0 < half_width < 0.5:
        raise ValueError(f"half_width must lie in (0, 0.5), got {half_width!r}")

    def width(n: int) -> float:
        low, high = wilson_interval(round(success_rate * n), n, confidence=confidence)
        return (high - low) / 2

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    # the normal approximation's count is an upper bound to within a few episodes
    n = max(1, math.ceil(z * z * max(success_rate * (1 - success_rate), 1e-4) / half_width**2))
    while n > 1 and width(n - 1) <= half_width:
        n -= 1
    while width(n) > half_width:
        n += 1
    return n


def two_level_bootstrap(
    outcomes: Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    random_state: int = 0,
) -> tuple[float, float]:
    """Percentile interval of the mean over seeds and episodes (a hierarchical bootstrap).

    Each resample draws the seeds with replacement, then, for every drawn
    seed, that seed's episodes with replacement; its statistic is the mean over
    the drawn seeds of each one's mean over its drawn episodes. The interval so
    carries both the spread between training seeds and the sampling of the
    episode set.

    Parameters
    ----------
    outcomes : sequence of sequence of float, ``k`` seeds with ``n_i`` episodes each
        Per-episode results of each seed (1.0/0.0 for success).
    confidence : float
        Confidence level, in ``(0, 1)``.
    n_resamples : int
        Bootstrap resamples.
    random_state : int
        Seed of the bootstrap.

    Returns
    -------
    low, high : float
        The percentile interval.

    Raises
    ------
    ValueError
        If there is no seed, a seed has no episode, a value is not finite, or
        ``confidence`` is outside ``(0, 1)``.
    """
    _check_confidence(confidence)
    if not len(outcomes):
        raise ValueError("two_level_bootstrap needs at least one seed's outcomes")
    seeds = [np.asarray(o, dtype=np.float64).reshape(-1) for o in outcomes]
    for i, o in enumerate(seeds):
        if not o.size:
            raise ValueError(f"seed {i} has no episodes")
        if not np.all(np.isfinite(o)):
            raise ValueError(f"seed {i}'s outcomes must be finite")
    rng = np.random.default_rng(random_state)
    k = len(seeds)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // max(o.size for o in seeds) // k)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        picks = rng.integers(k, size=(b, k))
        total = np.zeros(b)
        for j in range(k):
            # the j-th drawn seed of each resample, and a resample of its episodes
            for s, o in enumerate(seeds):
                rows = picks[:, j] == s
                drawn = o[rng.integers(o.size, size=(int(rows.sum()), o.size))]
                total[rows] += drawn.mean(axis=1)
        means[start : start + b] = total / k
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)
