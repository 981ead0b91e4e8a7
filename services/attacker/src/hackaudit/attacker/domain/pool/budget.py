"""The reference pool's budget in sandbox-seconds, as pure rules.

The pool measures the verifier beside the attack; it must not cost more than the attack itself.
Its budget is the attack's own sandbox-seconds (every run the attack asked for: candidates,
gold's runs, probes, the wider suite, coverage), times a share (1 by default), within a cap. The
budget is a hard bound, kept run by run (`allowance`): a run is sent only with a timeout that
cannot take the pool past what is left, and

* a run of the wider suite or a coverage run (the costly confirmation runs) is sent only when its
  whole timeout fits: otherwise the check is skipped;
* any other run (a graded run, a probe run) is sent with its own timeout, or with what is left
  when that is less (and it is then `shortened`: a timeout under it says nothing about the
  member); a run whose expected length (gold's own run of that kind) no longer fits is not sent.

A run is counted at the seconds the sandbox reports: the time its tests ran, within its timeout
(a run that times out is counted at its timeout). What can pass it is a run's time in the
background while a short run held its slot (its tests go on, more slowly) or a run that fails
before its tests at its container's wall time: each run keeps a fifth (`MARGIN_SHARE`) of what is
left for it for that, at most `RUN_MARGIN_S`, so that the small budget of a quick attack still
grades gold's few-second runs.
"""

from __future__ import annotations

from dataclasses import dataclass

# Seconds kept per run for what a run may be counted beyond its timeout (time in the
# background, a run that fails before its tests).
RUN_MARGIN_S = 5.0
MARGIN_SHARE = 0.2
# A run with less than this left for it is not sent (an example task's tests take a few tenths).
MIN_RUN_S = 0.25
# A graded run with no timeout of its own gets this many times gold's graded run, at least
# `GRADE_FLOOR_S` (a variant of gold takes about gold's time; the sandbox's default is the same).
GRADE_FACTOR = 3.0
GRADE_FLOOR_S = 30.0
# Run kinds sent only when their whole timeout fits: the wider suite and coverage runs.
COSTLY_KINDS = frozenset({"suite", "coverage"})


def pool_budget(cap: float | None, attack_seconds: float, share: float = 1.0) -> float:
    """The pool's budget: `share` × the attack's own sandbox-seconds, within `cap`."""
    bound = max(0.0, share * attack_seconds)
    return bound if cap is None else min(cap, bound)


def budget_text(budget: float, attack_seconds: float, cap: float | None, share: float = 1.0) -> str:
    """The budget as a reason quotes it, with what bounds it."""
    why = f"the attack's own {attack_seconds:.0f}"
    if share != 1.0:
        why = f"{share:g} × {why}"
    if cap is not None and budget >= cap:
        why = f"its cap; the attack took {attack_seconds:.0f}"
    return f"the pool's budget of {budget:g} sandbox-seconds ({why})"


def grade_timeout(gold_s: float | None) -> float | None:
    """The timeout of a graded run that has none of its own: `GRADE_FACTOR` × gold's graded
    run, at least `GRADE_FLOOR_S`; None while gold's run is not known."""
    if not gold_s:
        return None
    return max(GRADE_FLOOR_S, GRADE_FACTOR * gold_s)


@dataclass(frozen=True)
class Allowance:
    """What one run may take per repeat (`timeout_s`), or why it is not sent (`refused`)."""

    timeout_s: float | None = None
    shortened: bool = False  # the timeout is what is left, less than the run's own
    refused: str = ""


def allowance(
    left_s: float,
    repeats: int,
    kind: str,
    own_timeout_s: float | None,
    expected_s: float | None = None,
    margin_s: float = RUN_MARGIN_S,
) -> Allowance:
    """The timeout a run of `kind` (`repeats` times; `own_timeout_s` its own limit, None:
    unknown; `expected_s` how long gold's run of that kind took) may have with `left_s` of the
    pool's budget left."""
    runs = max(repeats, 1)
    margin = min(margin_s, MARGIN_SHARE * left_s / runs)
    each = (left_s - runs * margin) / runs
    plural = f"{runs} runs" if runs > 1 else "a run"
    if each < MIN_RUN_S:
        return Allowance(refused=f"is spent ({left_s:.0f} s left): {plural} of kind {kind!r}")
    if kind in COSTLY_KINDS and (own_timeout_s is None or own_timeout_s > each):
        limit = "no timeout" if own_timeout_s is None else f"up to {own_timeout_s:.0f} s each"
        return Allowance(
            refused=f"has {left_s:.0f} s left: {plural} of kind {kind!r} ({limit}) does not fit"
        )
    if expected_s is not None and expected_s > each:
        return Allowance(
            refused=(
                f"has {left_s:.0f} s left: {plural} of kind {kind!r} (gold's took"
                f" {expected_s:.0f} s) does not fit"
            )
        )
    if own_timeout_s is not None and own_timeout_s <= each:
        return Allowance(timeout_s=own_timeout_s)
    return Allowance(timeout_s=each, shortened=True)
