"""The writable places of a sandbox container, shared by both isolation modes: every one a
size-limited tmpfs on a read-only root, and a memory limit that holds all they may take at once."""

from __future__ import annotations

import subprocess

import pytest

from hackaudit.sandbox.adapters.docker_backend import Limits, container_options
from hackaudit.sandbox.adapters.writable_places import (
    IMAGE_LAUNCHER,
    MQUEUE_MB,
    POPULATE,
    PRISTINE,
    SHELL,
    SHM_MB,
    TESTBED_KB_LABEL,
    TESTBED_MARGIN_MB,
    confined_options,
    image_argv,
    memory_limit_mb,
    recipe,
    recorded_testbed_kb,
    writable_places,
    write_shares,
)
from hackaudit.sandbox.domain.protocol import SPENT, WRAPPER, launcher_argv

LIMITS = Limits(memory_mb=2048, pids=512, cpus=1.0, max_file_bytes=1 << 30)


def test_every_place_gets_a_share_of_the_cap_and_testbed_its_own_size_on_top() -> None:
    places = {place.path: place for place in writable_places(1024, 40 << 10)}

    assert set(places) == {"/testbed", "/tmp", "/var/tmp"}
    assert places["/testbed"].size_mb == 40 + TESTBED_MARGIN_MB + 448
    assert places["/tmp"].size_mb == 448
    assert places["/var/tmp"].size_mb == 64
    assert "size=448m" in places["/tmp"].tmpfs()
    assert "uid=1000" in places["/testbed"].tmpfs()


def test_an_image_without_a_repository_gets_no_testbed_mount() -> None:
    assert [place.path for place in writable_places(64, None)] == ["/tmp", "/var/tmp"]
    assert write_shares(64, testbed=False) == {"/tmp": 56, "/var/tmp": 4, "/dev/shm": 4}


@pytest.mark.parametrize("cap", [8, 9, 15, 16, 17, 100, 1024, 1025, 4096, 100_000])
@pytest.mark.parametrize("testbed", [True, False])
def test_the_shares_add_up_to_the_cap_and_none_is_empty(cap: int, testbed: bool) -> None:
    shares = write_shares(cap, testbed)

    assert sum(shares.values()) == cap
    assert all(size >= 1 for size in shares.values()), "a tmpfs of size 0 has no limit"
    assert shares["/dev/shm"] <= SHM_MB


@pytest.mark.parametrize("testbed_kb", [None, 0, 40 << 10, 3 << 20])
@pytest.mark.parametrize("cap", [8, 64, 1024, 5000])
def test_the_memory_limit_holds_the_processes_and_every_place_filled_at_once(
    cap: int, testbed_kb: int | None
) -> None:
    base = container_options("img", LIMITS, "owner", launcher_argv(), "1000:1000")
    options = confined_options(base, 2048, cap, testbed_kb)
    held = sum(int(size.split("size=")[1].split("m")[0]) for size in options["tmpfs"].values())
    held += int(options["shm_size"].rstrip("m")) + MQUEUE_MB

    assert options["mem_limit"] == f"{memory_limit_mb(2048, cap, testbed_kb)}m"
    limit = memory_limit_mb(2048, cap, testbed_kb)
    assert held + 2048 <= limit
    assert limit - held - 2048 == (TESTBED_MARGIN_MB if testbed_kb is None else 0)


def test_confined_options_make_the_root_read_only_and_raise_the_memory_limit() -> None:
    base = container_options("img", LIMITS, "owner", launcher_argv(), "1000:1000")
    options = confined_options(base, 2048, 256, 1024)

    assert options["read_only"] is True
    assert set(options["tmpfs"]) == {"/testbed", "/tmp", "/var/tmp"}
    assert options["shm_size"] == "16m"
    expected = f"{memory_limit_mb(2048, 256, 1024)}m"
    assert options["mem_limit"] == options["memswap_limit"] == expected
    assert options["cap_drop"] == base["cap_drop"]  # everything else is kept


def test_the_launcher_fills_testbed_first_only_when_asked() -> None:
    filled = image_argv(launcher_argv(), populate=True)
    plain = image_argv(launcher_argv(), populate=False)

    assert filled[2] == POPULATE + IMAGE_LAUNCHER
    assert plain[2] == IMAGE_LAUNCHER
    assert filled[:2] == plain[:2] == launcher_argv()[:2]
    assert filled[3:] == launcher_argv()[3:]
    assert image_argv(("sleep", "infinity"), populate=True) == ("sleep", "infinity")


@pytest.mark.parametrize("script", [POPULATE + IMAGE_LAUNCHER], ids=["launcher"])
def test_the_image_launcher_parses(script: str) -> None:
    assert subprocess.run(["sh", "-n", "-c", script], check=False).returncode == 0


def test_the_recipe_keeps_a_pristine_copy_and_records_its_size() -> None:
    text = recipe("task:1", "sha256:abc", 2048)

    assert f"cp -a /testbed {PRISTINE}" in text
    assert f"chmod 0111 {SHELL}" in text
    assert f'{TESTBED_KB_LABEL}="2048"' in text
    assert recorded_testbed_kb({TESTBED_KB_LABEL: "2048"}) == 2048


def test_an_image_without_a_repository_is_derived_without_a_copy() -> None:
    text = recipe("task:1", "sha256:abc", None)

    assert "/testbed" not in text
    assert recorded_testbed_kb({TESTBED_KB_LABEL: ""}) is None
    assert recorded_testbed_kb(None) is None


def test_the_wrapper_removes_the_run_files_before_the_tests_start() -> None:
    removal = WRAPPER.index('rm -f -- "$stage/')
    begin = WRAPPER.index('mark "begin:')
    read_junit = WRAPPER.index('read -r junit < "$stage/junit.path"')

    assert read_junit < removal < begin
    assert {"test.patch", "test.sh", "candidate.diff", "junit.path", "base"} <= set(SPENT)
    assert all(f'"$stage/{name}"' in WRAPPER[removal:begin] for name in SPENT)
    assert '"$stage/junit.path"' not in WRAPPER[begin:]
    assert '"$stage/test.sh"' not in WRAPPER[begin:]
