"""A run's phase deadline moves by the time it spends in the background, at most to
`MAX_STRETCH` times its limit (`domain.deadlines`); the demotion says since when, and the
Docker backend reads a run to the moved deadline."""

from __future__ import annotations

import time

import pytest

from hackaudit.sandbox.adapters.docker_backend import DockerBackend
from hackaudit.sandbox.adapters.output_capture import OutputCapture
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.deadlines import MAX_STRETCH, PhaseDeadline, time_in
from hackaudit.sandbox.domain.execution import Phase, RunPlan
from hackaudit.sandbox.settings import SandboxSettings


def test_a_run_never_in_the_background_keeps_its_wall_clock_deadline() -> None:
    deadline = PhaseDeadline(started=100.0, limit_s=10.0)
    assert deadline.at(105.0) == 110.0
    assert not deadline.passed(109.9)
    assert deadline.passed(110.0)
    assert deadline.left(104.0) == 6.0


def test_time_in_the_background_moves_the_deadline_like_a_pause() -> None:
    deadline = PhaseDeadline(started=100.0, limit_s=10.0)
    # In the background since 104: 6 s were left then, and 6 s are left as it goes on.
    there = [(104.0, None)]
    assert deadline.at(104.0, there) == 110.0
    assert deadline.at(112.0, there) == 118.0
    assert deadline.left(112.0, there) == 6.0
    assert not deadline.passed(115.0, there)


def test_only_the_times_in_the_background_count_once_the_run_is_back_in_a_slot() -> None:
    deadline = PhaseDeadline(started=100.0, limit_s=10.0)
    # 3 s there, back in a slot, then 2 s there again so far.
    moves = [(102.0, 105.0), (108.0, None)]
    assert deadline.at(106.0, moves) == 113.0
    assert deadline.at(110.0, moves) == 115.0
    assert deadline.passed(118.0, [(102.0, 105.0), (108.0, 110.0)])


def test_time_in_the_background_counts_only_within_the_span_asked() -> None:
    moves = [(95.0, 102.0), (108.0, None)]
    assert time_in(moves, 100.0, 110.0) == 4.0  # 100-102 and 108-110
    assert time_in(moves, 103.0, 107.0) == 0.0
    assert time_in((), 0.0, 10.0) == 0.0


def test_background_time_before_the_phase_began_does_not_count() -> None:
    # Demoted during set-up: only the tests' own time in the background moves their deadline.
    tests = PhaseDeadline(started=100.0, limit_s=10.0)
    assert tests.at(100.0, [(90.0, None)]) == 110.0
    assert tests.at(105.0, [(90.0, None)]) == 115.0
    assert tests.at(105.0, [(90.0, 95.0)]) == 110.0


def test_the_deadline_moves_at_most_to_the_stretch_times_the_limit() -> None:
    deadline = PhaseDeadline(started=100.0, limit_s=10.0)
    assert MAX_STRETCH == 3.0
    there = [(101.0, None)]
    assert deadline.at(125.0, there) == 130.0
    assert deadline.at(500.0, there) == 130.0
    assert not deadline.passed(129.9, there)
    assert deadline.passed(130.0, there)


def test_a_run_demoted_after_its_deadline_passed_has_still_timed_out() -> None:
    deadline = PhaseDeadline(started=100.0, limit_s=10.0)
    assert deadline.passed(111.0, [(110.5, None)])


def test_a_stretch_below_one_or_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="stretch"):
        PhaseDeadline(started=0.0, limit_s=10.0, stretch=0.5)
    with pytest.raises(ValueError, match="limit_s"):
        PhaseDeadline(started=0.0, limit_s=-1.0)


def test_a_demotion_keeps_the_runs_times_in_the_background() -> None:
    demotion = Demotion()
    moves: list[bool] = []
    demotion.when_moved(moves.append)
    assert demotion.since is None and demotion.background() == ()
    before = time.monotonic()
    demotion.demote()
    since = demotion.since
    assert since is not None and before <= since <= time.monotonic()
    demotion.demote()  # already there: nothing changes
    assert demotion.since == since and moves == [True]
    demotion.promote()
    ((start, until),) = demotion.background()
    assert start == since and until is not None and until >= since
    assert not demotion.demoted and moves == [True, False]
    demotion.demote()
    assert len(demotion.background()) == 2 and moves == [True, False, True]
    late: list[bool] = []
    demotion.when_moved(late.append)  # registered while it is there: told at once
    assert late == [True]


class _SilentStream:
    """A run's output stream on which nothing arrives: `recv` waits out its timeout."""

    def __init__(self) -> None:
        self._timeout = 1.0

    def settimeout(self, seconds: float) -> None:
        self._timeout = seconds

    def recv(self, _size: int) -> bytes:
        time.sleep(self._timeout)
        raise TimeoutError


def _silent_run_lasts(demotion: Demotion | None) -> float:
    """Seconds until the backend gives up on a run that prints nothing, set-up limit 0.3 s."""
    backend = DockerBackend(SandboxSettings(sweep_on_start=False), client=object())
    plan = RunPlan(
        run_id="r",
        image="i",
        argv=("sh",),
        stdin=b"",
        user="1000",
        begin_marker=b"@@b",
        split_marker=b"@@s",
        end_marker=b"@@e",
        setup_timeout_s=0.3,
        test_timeout_s=0.3,
    )
    capture = OutputCapture(b"@@b", b"@@s", b"@@e", 1024, 1024, 1024)
    started = time.monotonic()
    phase = backend._read(_SilentStream(), capture, plan, started, demotion)
    assert phase is Phase.SETUP
    return time.monotonic() - started


def test_the_backend_holds_a_background_run_to_its_moved_deadline() -> None:
    assert _silent_run_lasts(None) < 0.6
    demoted = Demotion()
    demoted.demote()
    assert 0.85 <= _silent_run_lasts(demoted) < 1.3  # 3 × 0.3 s
