"""Hostile writes on a real engine, in both isolation modes: what a run writes is capped (a write
past the cap fails inside the run with ENOSPC, the run is graded, the host's disk does not
fill; filling every writable place at once ends in a failed write, not in the container's OOM
kill), and the run's own files — the test patch, the test command — are out of the candidate's
reach while its code runs.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, running
from test_sandbox_hostile import assert_next_run_clean

from hackaudit.sandbox.adapters.writable_places import TESTBED_MARGIN_MB
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

CAP_MB = 32
# Each writable place takes files of 16 MiB until a write fails: 128 MiB are tried per place.
# The run resolves only when every place refused the writes with ENOSPC within twice the cap
# (`/testbed` has room for the repository's own copy on top of the cap).
FILL = f"""
import errno, os, time
_cap = {CAP_MB} << 20
_chunk = b"x" * (1 << 20)
_wrong = []
_made = []
for _place in ("/testbed", "/tmp", "/var/tmp"):
    _written, _error = 0, None
    try:
        for _i in range(8):
            _path = os.path.join(_place, "hackaudit-fill-%d" % _i)
            _made.append(_path)
            with open(_path, "wb") as _f:
                for _ in range(16):
                    _f.write(_chunk)
                    _f.flush()
                    _written += len(_chunk)
    except OSError as _exc:
        _error = _exc.errno
    if _error != errno.ENOSPC or _written > 2 * _cap:
        _wrong.append("%s: %d MiB written, errno %s" % (_place, _written >> 20, _error))
time.sleep(1.5)
for _path in _made:
    try:
        os.remove(_path)
    except OSError:
        pass
if _wrong:
    raise RuntimeError("writes not capped: " + "; ".join(_wrong))
"""

TIGHT_MEMORY_MB = 128
TIGHT_CAP_MB = 96
# Fills every writable place at once: files of 16 MiB in each place in turn, kept, until a write
# fails. The run resolves only when each place refused a write with ENOSPC while the run was
# alive, and all the places together took no more than the cap (plus `/testbed`'s margin over
# the repository's copy); the files are removed before the tests.
FILL_ALL = f"""
import errno, os
_chunk = b"x" * (1 << 20)
_wrong, _made, _total = [], [], 0
for _place in ("/testbed", "/tmp", "/var/tmp", "/dev/shm"):
    _error = None
    try:
        for _i in range(16):
            _path = os.path.join(_place, "hackaudit-fill-%d" % _i)
            _made.append(_path)
            with open(_path, "wb") as _f:
                for _ in range(16):
                    _f.write(_chunk)
                    _f.flush()
                    _total += len(_chunk)
    except OSError as _exc:
        _error = _exc.errno
    if _error != errno.ENOSPC:
        _wrong.append("%s: errno %s" % (_place, _error))
if _total > ({TIGHT_CAP_MB} + {TESTBED_MARGIN_MB}) << 20:
    _wrong.append("%d MiB written in all" % (_total >> 20))
for _path in _made:
    try:
        os.remove(_path)
    except OSError:
        pass
if _wrong:
    raise RuntimeError("writes not capped in all: " + "; ".join(_wrong))
"""

# Looks for the run's files from inside the tests: the run's directory under /tmp (also found as
# HOME's parent when the image gives uid 1000 no writable home), and any file in the writable
# places outside the repository that holds the test patch.
SNOOP = """
import glob, os
_found = []
_dirs = set(glob.glob("/tmp/hackaudit.*"))
if os.environ.get("HOME", "").startswith("/tmp/"):
    _dirs.add(os.path.dirname(os.environ["HOME"]))
_names = ("test.patch", "test.sh", "candidate.diff", "files.manifest", "file.0", "reset.list",
          "base", "junit.path")
for _d in _dirs:
    for _n in _names:
        _p = os.path.join(_d, _n)
        if not os.path.lexists(_p):
            continue
        _found.append(_p)
        try:
            open(_p, "rb").read()
            _found.append("read " + _p)
        except OSError:
            pass
        try:
            open(_p, "ab").close()
            _found.append("wrote " + _p)
        except OSError:
            pass
for _top in ("/tmp", "/var/tmp", "/dev/shm"):
    for _root, _subdirs, _files in os.walk(_top):
        for _n in _files:
            try:
                with open(os.path.join(_root, _n), "rb") as _f:
                    if b"+    def test_add_" + b"negative" in _f.read(1 << 20):
                        _found.append("test patch in " + os.path.join(_root, _n))
            except OSError:
                pass
if _found:
    raise RuntimeError("run files within reach: " + ", ".join(_found))
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["container", "warm"])
async def sandbox(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    """A runner in each isolation mode with a small write cap; one run at a time."""
    mode = str(request.param)
    async with running(
        tmp_path_factory.mktemp(mode),
        isolation=mode,
        max_write_mb=CAP_MB,
        max_concurrent_runs=1,
        warm_per_run=1,
    ) as runner:
        yield runner


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["container", "warm"])
async def tight(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    """A runner in each isolation mode whose memory is less than the places would hold if each
    had the whole write cap."""
    mode = str(request.param)
    async with running(
        tmp_path_factory.mktemp(f"tight-{mode}"),
        isolation=mode,
        memory_mb=TIGHT_MEMORY_MB,
        max_write_mb=TIGHT_CAP_MB,
        max_concurrent_runs=1,
        warm_per_run=1,
    ) as runner:
        yield runner


class _LowestFree:
    """Samples the free space of a file system in a thread; `drop` is the most it fell."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._start = shutil.disk_usage(path).free
        self._lowest = self._start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self._lowest = min(self._lowest, shutil.disk_usage(self._path).free)

    @property
    def drop(self) -> int:
        return self._start - self._lowest

    def __enter__(self) -> _LowestFree:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def docker_root(docker_client: object) -> str:
    return str(docker_client.info()["DockerRootDir"])  # type: ignore[attr-defined]


async def test_writes_past_the_cap_fail_inside_the_run_and_spare_the_host_disk(
    sandbox: Runner, calc_image: TaskImage, docker_root: str
) -> None:
    task = calc_task(calc_image)
    with _LowestFree(docker_root) as disk:
        result = await sandbox.run_once(
            task, files_candidate(ops_with(FILL, fixed=True)), timeout_s=60
        )

    assert disk.drop <= CAP_MB << 20, f"the host's disk lost {disk.drop >> 20} MiB"
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail
    await assert_next_run_clean(sandbox, calc_image)


async def test_the_candidate_cannot_read_or_write_the_runs_files(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image)
    result = await sandbox.run_once(
        task, files_candidate(ops_with(SNOOP, fixed=True)), timeout_s=60
    )

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail


async def test_filling_every_place_at_once_fails_a_write_and_never_the_container(
    tight: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image)
    result = await tight.run_once(
        task, files_candidate(ops_with(FILL_ALL, fixed=True)), timeout_s=60
    )

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail
    await assert_next_run_clean(tight, calc_image)
