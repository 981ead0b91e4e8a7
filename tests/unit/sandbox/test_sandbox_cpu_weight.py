"""When a long run's container loses CPU weight (`domain.cpu_weight`, or its demotion to the
background), the settings that say so, and what lowers it (`LongRunWeight`), whose failure never
reaches the run."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from hackaudit.sandbox.adapters.docker_backend import LongRunWeight
from hackaudit.sandbox.domain.cpu_weight import NORMAL_SHARES, CpuWeight
from hackaudit.sandbox.settings import SandboxSettings


def test_a_run_loses_weight_once_it_has_gone_on_past_the_threshold() -> None:
    weight = CpuWeight(after_s=10.0, low_shares=2)
    assert weight.shares(0.0) == NORMAL_SHARES
    assert weight.shares(9.9) == NORMAL_SHARES
    assert weight.shares(10.0) == 2
    assert weight.shares(600.0) == 2


def test_the_lowering_is_due_after_the_time_left_to_the_threshold() -> None:
    weight = CpuWeight(after_s=10.0)
    assert weight.lower_in(0.0, limit_s=300.0) == 10.0
    assert weight.lower_in(4.0, limit_s=300.0) == 6.0
    assert weight.lower_in(12.0, limit_s=300.0) == 0.0


def test_a_run_whose_deadline_comes_before_the_threshold_is_never_lowered() -> None:
    assert CpuWeight(after_s=10.0).lower_in(0.0, limit_s=8.0) is None


def test_switched_off_no_run_loses_weight() -> None:
    for weight in (CpuWeight(after_s=None), CpuWeight(after_s=1.0, low_shares=NORMAL_SHARES)):
        assert not weight.lowers
        assert weight.lower_in(0.0, limit_s=300.0) is None
        assert weight.shares(1000.0) == NORMAL_SHARES


@pytest.mark.parametrize(("after", "low"), [(-1.0, 2), (1.0, 1), (1.0, NORMAL_SHARES + 1)])
def test_a_weight_outside_the_kernels_range_is_refused(after: float, low: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        CpuWeight(after_s=after, low_shares=low)


def test_the_settings_lower_long_runs_on_demotion_by_default() -> None:
    settings = SandboxSettings(long_run_floor_s=7.0)
    assert settings.cpu_weight() == CpuWeight(after_s=None, low_shares=2)
    assert settings.background() == settings.max_concurrent_runs == 2
    assert settings.runs_at_once() == 4
    own = SandboxSettings(long_run_floor_s=7.0, long_run_cpu_after_s=1.5, long_run_cpu_shares=64)
    assert own.cpu_weight() == CpuWeight(after_s=1.5, low_shares=64)
    off = SandboxSettings(lower_long_runs=False)
    assert not off.cpu_weight().lowers
    assert off.background() == 0
    assert off.runs_at_once() == 2


def test_without_a_background_the_settings_lower_long_runs_after_the_floor() -> None:
    for settings in (
        SandboxSettings(long_run_floor_s=7.0, background_runs=0),
        SandboxSettings(long_run_floor_s=7.0, scheduling="fifo"),
    ):
        assert settings.background() == 0
        assert settings.cpu_weight() == CpuWeight(after_s=7.0, low_shares=2)


def test_a_demoted_run_is_lowered_at_once_and_says_so() -> None:
    called = threading.Event()

    def lower() -> bool:
        called.set()
        return True

    weight = LongRunWeight(lower, None)
    weight.lower_soon()
    assert called.wait(2.0)
    assert weight.stop() is True


def test_a_run_back_in_a_slot_gets_its_weight_back_and_quick_moves_end_where_they_should() -> None:
    changes: list[str] = []
    lowered, restored = threading.Event(), threading.Event()

    def lower() -> bool:
        changes.append("low")
        lowered.set()
        return True

    def restore() -> bool:
        changes.append("normal")
        restored.set()
        return True

    weight = LongRunWeight(lower, None, restore)
    weight.background(True)
    assert lowered.wait(2.0)
    weight.background(False)
    assert restored.wait(2.0)
    for moved_out in (True, False, True, False, True):
        weight.background(moved_out)
    deadline = time.monotonic() + 2.0
    while changes[-1] != "low" and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert weight.stop() is True  # last moved to the background: low
    assert changes[:2] == ["low", "normal"] and changes[-1] == "low"
    assert all(a != b for a, b in itertools.pairwise(changes))  # no stale repeats


def test_a_run_that_ended_is_not_lowered_by_a_late_demotion() -> None:
    calls: list[int] = []
    weight = LongRunWeight(lambda: bool(calls.append(1)) or True, 60.0)
    assert weight.stop() is False
    weight.lower_soon()
    time.sleep(0.1)
    assert calls == []


def test_the_timer_lowers_a_run_that_goes_on_and_says_so() -> None:
    called = threading.Event()

    def lower() -> bool:
        called.set()
        return True

    weight = LongRunWeight(lower, 0.01)
    assert called.wait(2.0)
    assert weight.stop() is True


def test_a_run_that_ends_first_is_never_lowered() -> None:
    calls: list[int] = []
    weight = LongRunWeight(lambda: bool(calls.append(1)) or True, 0.2)
    assert weight.stop() is False
    time.sleep(0.3)
    assert calls == []
    assert LongRunWeight(lambda: bool(calls.append(1)) or True, None).stop() is False
    assert calls == []


def test_a_failed_lowering_counts_as_not_lowered() -> None:
    done = threading.Event()

    def lower() -> bool:
        done.set()
        return False

    weight = LongRunWeight(lower, 0.0)
    assert done.wait(2.0)
    assert weight.stop() is False


class _RefusingApi:
    def update_container(self, container: str, **changes: int) -> None:
        raise RuntimeError("engine refused the update")


class _Client:
    api = _RefusingApi()


def test_an_engine_refusing_the_update_is_logged_not_raised() -> None:
    from hackaudit.sandbox.adapters.docker_backend import DockerBackend

    backend = DockerBackend(SandboxSettings(), client=_Client())
    assert backend._set_shares("c0ffee", 2) is False
