"""Hostile candidates on a real engine: each is contained and classified, and the next run on
the same image starts clean.

The "next run is clean" check is a probe candidate: the gold fix plus import-time code that
raises (so the tests error and the run is not resolved) when it finds any trace a hostile run
tried to leave — files in /tmp, $HOME, /etc, site-packages or the repository, a missing `.git`,
or a process left running.
"""

from __future__ import annotations

import resource
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_calc import TaskImage, calc_task, diff_candidate, files_candidate, ops_with

from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import RunStatus, TestStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

TRACE_PATHS = """[
    "/tmp/hackaudit-trace",
    os.path.expanduser("~/hackaudit-trace"),
    "/etc/hackaudit-trace",
    os.path.join(sysconfig.get_paths()["purelib"], "hackaudit_trace.pth"),
    "/testbed/hackaudit-trace",
]"""

PROBE = f"""
import os, sysconfig
_dirty = [p for p in {TRACE_PATHS} if os.path.exists(p)]
if not os.path.isdir("/testbed/.git"):
    _dirty.append(".git missing")
for _pid in os.listdir("/proc"):
    if _pid.isdigit():
        try:
            with open(f"/proc/{{_pid}}/cmdline", "rb") as _f:
                if b"hackaudit-trace-daemon" in _f.read():
                    _dirty.append("process " + _pid)
        except OSError:
            pass
if _dirty:
    raise RuntimeError("dirty sandbox: " + ", ".join(_dirty))
"""

LEAVE_TRACES = f"""
import os, subprocess, sys, sysconfig
_written = []
for _p in {TRACE_PATHS}:
    try:
        with open(_p, "w") as _f:
            _f.write("x")
        _written.append(_p)
    except OSError:
        pass
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(1000)", "hackaudit-trace-daemon"],
    start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
if "/etc/hackaudit-trace" in _written or any(p.endswith(".pth") for p in _written):
    raise RuntimeError("wrote outside the writable places: " + ", ".join(_written))
"""


async def assert_next_run_clean(sandbox: Runner, image: TaskImage) -> None:
    task = calc_task(image)
    probe = await sandbox.run_once(task, files_candidate(ops_with(PROBE, fixed=True)), timeout_s=60)
    assert probe.status is RunStatus.COMPLETED, probe.reason
    assert probe.resolved is True, probe.log_tail


async def test_writes_fail_or_vanish_with_the_container(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image)
    result = await sandbox.run_once(
        task, files_candidate(ops_with(LEAVE_TRACES, fixed=True)), timeout_s=60
    )

    # /etc and site-packages refused the writes (else the import raises and nothing resolves).
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail
    assert "hackaudit-trace" in result.flags.files_outside_diff
    await assert_next_run_clean(sandbox, calc_image)


async def test_infinite_loop_times_out(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image)
    candidate = files_candidate(ops_with("while True:\n    pass", fixed=True))
    result = await sandbox.run_once(task, candidate, timeout_s=3)

    assert result.status is RunStatus.TIMEOUT
    assert result.resolved is None
    await assert_next_run_clean(sandbox, calc_image)


async def test_fork_bomb_is_contained(sandbox: Runner, calc_image: TaskImage) -> None:
    bomb = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    task = calc_task(calc_image)
    result = await sandbox.run_once(task, files_candidate(ops_with(bomb, fixed=True)), timeout_s=5)

    assert result.status in {RunStatus.TIMEOUT, RunStatus.COMPLETED}
    assert result.resolved is not True
    await assert_next_run_clean(sandbox, calc_image)


async def test_memory_bomb_is_oom(sandbox: Runner, calc_image: TaskImage) -> None:
    bomb = "_hog = []\nwhile True:\n    _hog.append(bytearray(32 << 20))"
    task = calc_task(calc_image)
    result = await sandbox.run_once(task, files_candidate(ops_with(bomb, fixed=True)), timeout_s=30)

    assert result.status is RunStatus.OOM, result.reason
    assert result.resolved is None
    await assert_next_run_clean(sandbox, calc_image)


async def test_output_flood_is_capped(sandbox: Runner, calc_image: TaskImage) -> None:
    flood = "import os\n_chunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    os.write(1, _chunk)"
    task = calc_task(calc_image, test_command="pytest -s -rA")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await sandbox.run_once(
        task, files_candidate(ops_with(flood, fixed=True)), timeout_s=60
    )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True  # the summary at the end survived the cap
    assert result.log_artifact is not None
    assert Path(result.log_artifact).stat().st_size < 4 << 20
    assert grown_kib < 200 * 1024
    await assert_next_run_clean(sandbox, calc_image)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP listener on the host's loopback that records every connection it accepts."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except TimeoutError:
                continue
            accepted.append(peer)
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


async def test_no_network_reaches_the_host(
    sandbox: Runner, calc_image: TaskImage, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    reach = f"""
import os, socket
_interfaces = sorted(os.listdir("/sys/class/net"))
if _interfaces != ["lo"]:
    raise RuntimeError(f"network interfaces: {{_interfaces}}")
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
except OSError:
    pass
else:
    raise RuntimeError("reached the host's listener")
"""
    task = calc_task(calc_image)
    result = await sandbox.run_once(
        task, files_candidate(ops_with(reach, fixed=True)), timeout_s=60
    )

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail
    assert accepted == []


async def test_deleting_git_is_flagged_and_does_not_persist(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    wipe = "import shutil\nshutil.rmtree('/testbed/.git', ignore_errors=True)"
    task = calc_task(calc_image)
    result = await sandbox.run_once(task, files_candidate(ops_with(wipe, fixed=True)), timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert ".git" in result.flags.files_outside_diff
    await assert_next_run_clean(sandbox, calc_image)


FORGE = """
import atexit, os, subprocess, sys
_fake = (
    "\\n@@hackaudit:0123456789abcdef0123456789abcdef:test-exit:0:0\\n"
    "========= short test summary info =========\\n"
    "PASSED tests/test_ops.py::OpsTest::test_add\\n"
    "PASSED tests/test_ops.py::OpsTest::test_add_negative\\n"
    "PASSED tests/test_ops.py::OpsTest::test_mul\\n"
    "PASSED tests/test_ops.py::OpsTest::test_mul_zero\\n"
    "========= 4 passed in 0.01s =========\\n"
)
_late = "import os, time; time.sleep({delay}); os.write(1, b'LATE-FORGERY\\\\n')"


def _after_pytest():
    os.write(1, _fake.encode())
    # Started once pytest has given stdout back, so this process writes to the real stream.
    subprocess.Popen([sys.executable, "-c", _late], start_new_session=True)


print(_fake)
atexit.register(_after_pytest)
"""


@pytest.mark.parametrize(
    ("extra", "caught_by"),
    [
        ("", "FAIL_TO_PASS 0/2"),  # pytest's own summary reports the failures
        ("raise RuntimeError('no tests today')", "not backed by pytest's JUnit report"),
    ],
    ids=["tests-fail", "tests-never-run"],
)
async def test_printed_results_are_not_graded(
    sandbox: Runner, calc_image: TaskImage, extra: str, caught_by: str
) -> None:
    """The bug stays; the candidate prints a fake end marker and, after pytest's own summary
    (from an atexit hook), a complete fake one; it also leaves a process that would print more
    once pytest is gone. When its module also fails to import, pytest's summary names no test at
    all and only the JUnit report tells the forged lines apart."""
    task = calc_task(calc_image)
    candidate = files_candidate(ops_with(FORGE.replace("{delay}", "1.5") + extra))
    result = await sandbox.run_once(task, candidate, timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False
    assert result.tests.get("tests/test_ops.py::OpsTest::test_add") is not TestStatus.PASSED
    assert caught_by in result.reason
    assert result.log_artifact is not None
    log = Path(result.log_artifact).read_text()
    assert "PASSED tests/test_ops.py::OpsTest::test_add\n" in log  # the forgery was printed...
    assert "LATE-FORGERY" not in log  # ...the late writer was stopped before it could write


async def test_killing_the_wrapper_never_resolves(sandbox: Runner, calc_image: TaskImage) -> None:
    kill = "import os, signal\nos.kill(-1, signal.SIGKILL)"
    task = calc_task(calc_image)
    result = await sandbox.run_once(task, files_candidate(ops_with(kill, fixed=True)), timeout_s=60)

    assert result.status is RunStatus.COMPLETED
    assert result.resolved is False
    assert "killed" in result.reason
    await assert_next_run_clean(sandbox, calc_image)


ESCAPES = [
    "diff --git a/../../etc/hackaudit b/../../etc/hackaudit\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/../../etc/hackaudit\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ /etc/hackaudit\n@@ -0,0 +1 @@\n+x\n",
    "diff --git a/calc/out b/calc/out\nnew file mode 120000\n--- /dev/null\n+++ b/calc/out\n"
    "@@ -0,0 +1 @@\n+../../etc\n\\ No newline at end of file\n",
    "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n"
    "@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch /tmp/x\n",
]


@pytest.mark.parametrize("diff", ESCAPES, ids=["dotdot", "absolute", "symlink-out", "git-dir"])
async def test_escaping_diffs_are_refused(
    sandbox: Runner, calc_image: TaskImage, diff: str
) -> None:
    result = await sandbox.run_once(calc_task(calc_image), diff_candidate(diff), timeout_s=60)

    assert result.status is RunStatus.PATCH_FAILED
    assert result.reason.startswith("refused")


async def test_escaping_file_mappings_are_refused(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image)
    by_key = await sandbox.run_once(task, files_candidate({"../evil.py": "x"}), timeout_s=60)
    # `link_out` is a symlink to /etc committed in the repository: only the container can see it.
    through_link = await sandbox.run_once(
        task, files_candidate({"link_out/hackaudit": "x"}), timeout_s=60
    )

    assert by_key.status is RunStatus.PATCH_FAILED and by_key.reason.startswith("refused")
    assert through_link.status is RunStatus.PATCH_FAILED
    assert through_link.reason.startswith("refused"), through_link.reason
