"""A local JetStream cluster for the fault tests: several nats-server processes routed to each other
on loopback.

One machine cannot lose a NATS node the way a deployment does, but it can run three of them: each
with its own server name, client port, route port and store folder, all in one `--cluster_name`.
The fault tests start one, kill a node (SIGKILL) in the middle of an audit and start it again on
the same ports and store, which is what a node that crashed and came back looks like to clients
and to the stream replicas. `HACKAUDIT_BUS_REPLICAS` sets how many nodes keep each stream.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from hackaudit.shared.errors import BusUnavailableError
from hackaudit.shared.nats_server import find_nats_server, free_port, start_process, stop_process


@dataclass
class ClusterNode:
    """One nats-server of the cluster: its name, ports and store folder stay the same across
    restarts."""

    name: str
    port: int
    route_port: int
    monitor_port: int
    data_dir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def route_url(self) -> str:
        return f"nats://127.0.0.1:{self.route_port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def log_file(self) -> Path:
        return self.data_dir / "nats-server.log"


class NatsCluster:
    """`size` nats-server processes with JetStream, routed into one cluster on 127.0.0.1.

    Use as a context manager (every node is stopped on exit); `url` is a node to connect to
    (clients learn the others from it), `urls` all of them.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        size: int = 3,
        name: str = "hackaudit",
        start_timeout_s: float = 30.0,
    ):
        if size < 1:
            raise ValueError("a cluster has at least one node")
        self.name = name
        self.start_timeout_s = start_timeout_s
        self.nodes = [
            ClusterNode(
                name=f"{name}-{i + 1}",
                port=free_port(),
                route_port=free_port(),
                monitor_port=free_port(),
                data_dir=data_dir / f"node-{i + 1}",
            )
            for i in range(size)
        ]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def node(self, name: str) -> ClusterNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node {name!r} in cluster {self.name!r}")

    def _command(self, node: ClusterNode) -> list[str]:
        routes = ",".join(other.route_url for other in self.nodes if other is not node)
        command = [
            str(find_nats_server()),
            "--jetstream",
            "--store_dir", str(node.data_dir / "jetstream"),
            "--server_name", node.name,
            "--addr", "127.0.0.1",
            "--port", str(node.port),
            "--http_port", str(node.monitor_port),
            "--cluster_name", self.name,
            "--cluster", node.route_url,
            "--log", str(node.log_file),
        ]  # fmt: skip
        if routes:
            command += ["--routes", routes]
        return command

    def start_node(self, node: ClusterNode) -> None:
        """Start (or restart) one node on its own ports and store; returns once it listens."""
        if node.running:
            return
        node.data_dir.mkdir(parents=True, exist_ok=True)
        node.process = start_process(self._command(node))  # dies with this process

    def kill_node(self, node: ClusterNode) -> None:
        """SIGKILL: the node dies as in a crash, with no chance to hand anything over."""
        if node.process is None:
            return
        if node.process.poll() is None:
            node.process.kill()
        node.process.wait(timeout=10)
        node.process = None

    def stop_node(self, node: ClusterNode) -> None:
        process, node.process = node.process, None
        stop_process(process)

    def wait_ready(self, nodes: list[ClusterNode] | None = None) -> None:
        """Until every node (or the given ones) reports JetStream healthy: routed, a meta leader
        elected, its streams current."""
        deadline = time.monotonic() + self.start_timeout_s
        for node in nodes or self.nodes:
            while not self._healthy(node):
                if node.process is not None and node.process.poll() is not None:
                    raise BusUnavailableError(f"nats-server {node.name} exited: {_tail(node)}")
                if time.monotonic() > deadline:
                    raise BusUnavailableError(
                        f"nats-server {node.name} not healthy in {self.start_timeout_s:g}s: "
                        f"{_tail(node)}"
                    )
                time.sleep(0.1)

    @staticmethod
    def _healthy(node: ClusterNode) -> bool:
        url = f"http://127.0.0.1:{node.monitor_port}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=1.0) as answer:
                body = json.loads(answer.read() or b"{}")
        except (OSError, urllib.error.URLError, ValueError):
            return False
        return bool(body.get("status") == "ok")

    def start(self) -> NatsCluster:
        try:
            for node in self.nodes:
                self.start_node(node)
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in self.nodes:
            self.stop_node(node)

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _tail(node: ClusterNode, chars: int = 1500) -> str:
    if not node.log_file.exists():
        return "(no log)"
    return node.log_file.read_text(errors="replace")[-chars:]
