"""deploy/compose.yaml and deploy/k8s/*.yaml parse, and agree with the code: every service they
run has a `python -m hackaudit.<name>` entry point, and the sandbox scales on its real consumer.
The Kubernetes manifests are only checked here: no cluster runs them in CI."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hackaudit.shared import subjects

REPO_ROOT = Path(__file__).resolve().parents[3]
DEPLOY = REPO_ROOT / "deploy"
COMPOSE_FILE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "k8s"
K8S_FILES = sorted(K8S.glob("*.yaml"))


def load_compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    return loaded


def load_k8s() -> list[dict[str, Any]]:
    return [
        doc for path in K8S_FILES for doc in yaml.safe_load_all(path.read_text()) if doc is not None
    ]


def has_entry_point(module: str) -> bool:
    """Whether `python -m <module>` runs something: the package has a `__main__`."""
    try:
        return importlib.util.find_spec(f"{module}.__main__") is not None
    except ModuleNotFoundError:
        return False


def test_compose_file_parses() -> None:
    compose = load_compose()
    assert compose["version"] == "3.8"
    assert {"nats", "scorer", "attacker", "sandbox"} <= set(compose["services"])


@pytest.mark.parametrize("name", sorted(load_compose()["services"]))
def test_compose_service_runs_an_entry_point(name: str) -> None:
    service = load_compose()["services"][name]
    command = service["command"]
    assert service["network_mode"] == "host"
    assert service["image"].startswith("hackaudit/services:")
    if name == "nats":
        assert command[:2] == ["nats-server", "--jetstream"]
        assert command[command.index("--store_dir") + 1] == "/data"
        return
    assert command == ["python", "-m", f"hackaudit.{name}"]
    # the compose NATS service, unless NATS_URL names another bus
    assert service["environment"]["NATS_URL"] == "${NATS_URL:-nats://127.0.0.1:4222}"
    assert has_entry_point(f"hackaudit.{name}"), (
        f"compose service {name!r} runs `python -m hackaudit.{name}`, "
        f"which has no __main__ module in the workspace"
    )


def test_compose_sandbox_tier() -> None:
    sandbox = load_compose()["services"]["sandbox"]
    assert sandbox["deploy"]["replicas"] == 2
    assert "/var/run/docker.sock:/var/run/docker.sock" in sandbox["volumes"]
    if str(sandbox.get("user", "0")).split(":")[0] not in {"0", "root"}:
        assert sandbox.get("group_add"), "a non-root sandbox needs the socket's group"


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose not installed")
def test_docker_compose_accepts_the_file() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE_FILE), "config", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", K8S_FILES, ids=lambda p: p.name)
def test_k8s_manifest_parses(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert docs
    for doc in docs:
        assert doc["apiVersion"]
        assert doc["kind"]


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in K8S_FILES} - {"kustomization.yaml"}


def test_k8s_deployments_run_service_entry_points() -> None:
    deployments = {d["metadata"]["name"]: d for d in load_k8s() if d["kind"] == "Deployment"}
    assert {"scorer", "attacker", "sandbox"} <= set(deployments)
    for name, deployment in deployments.items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert container["command"] == ["python", "-m", f"hackaudit.{name}"]
        assert container["envFrom"][0] == {"configMapRef": {"name": "hackaudit-bus"}}


def test_nats_statefulset_has_jetstream_storage() -> None:
    docs = load_k8s()
    (statefulset,) = [d for d in docs if d["kind"] == "StatefulSet"]
    assert statefulset["metadata"]["name"] == "nats"
    (config,) = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "nats-config"
    ]
    assert "jetstream" in config["data"]["nats.conf"]
    assert statefulset["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"


def test_sandbox_scales_on_its_consumer_lag() -> None:
    (scaled,) = [d for d in load_k8s() if d["kind"] == "ScaledObject"]
    assert scaled["spec"]["scaleTargetRef"]["name"] == "sandbox"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "nats-jetstream"
    assert trigger["metadata"]["stream"] == subjects.STREAM
    assert trigger["metadata"]["consumer"] == subjects.SANDBOX_RUNS.durable
    assert int(trigger["metadata"]["lagThreshold"]) > 0


def test_the_scaled_consumer_is_the_one_the_sandbox_service_consumes() -> None:
    """KEDA reads the lag of the consumer it is told; for a name the stream does not have it
    scales on the stream's last sequence number instead, without a word. So the trigger must
    name the durable consumer the sandbox service really declares, on its real stream."""
    from hackaudit.sandbox.app import build as build_sandbox
    from hackaudit.shared.settings import BusSettings

    (scaled,) = [d for d in load_k8s() if d["kind"] == "ScaledObject"]
    (trigger,) = scaled["spec"]["triggers"]
    consumers = {c.durable: c for c in build_sandbox(BusSettings()).consumers}
    assert trigger["metadata"]["consumer"] in consumers
    assert consumers[trigger["metadata"]["consumer"]].subject == subjects.RUN_REQUESTED
    assert trigger["metadata"]["stream"] == subjects.STREAM
    # the lag the operator sees is the series named in the manifest, for the same consumer
    lag_series = (
        f'hackaudit_queue_lag_messages{{stream="{subjects.STREAM}", '
        f'consumer="{trigger["metadata"]["consumer"]}"}}'
    )
    assert lag_series in (K8S / "sandbox-scaledobject.yaml").read_text()


def test_the_lag_metric_the_manifests_name_exists() -> None:
    from hackaudit.shared.metrics import ConsumerLag, Metrics

    metrics = Metrics.create()
    metrics.set_queue_lag(subjects.STREAM, [ConsumerLag(subjects.SANDBOX_RUNS.durable, 3, 2)])
    labels = {"stream": subjects.STREAM, "consumer": subjects.SANDBOX_RUNS.durable}
    assert metrics.registry.get_sample_value("hackaudit_queue_lag_messages", labels) == 5


def test_every_deployment_is_probed_and_scraped_on_the_configured_metrics_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hackaudit.shared.ops_endpoint import OpsSettings

    docs = load_k8s()
    (config,) = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "hackaudit-bus"
    ]
    for key, value in config["data"].items():
        monkeypatch.setenv(key, value)
    port = OpsSettings().port  # the variable the services really read
    assert port > 0
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert deployments
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        template = deployment["spec"]["template"]
        annotations = template["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true", name
        assert annotations["prometheus.io/port"] == str(port), name
        assert annotations["prometheus.io/path"] == "/metrics", name
        (container,) = template["spec"]["containers"]
        assert {"name": "metrics", "containerPort": port} in container["ports"], name
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
