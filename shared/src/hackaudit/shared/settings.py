"""Settings every service shares: where the bus is, where state lives, how messages are retried."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class BusSettings(BaseSettings):
    """How a service reaches NATS and how its consumers treat slow or failing handlers.

    With no `nats_url`, the CLI starts an embedded nats-server in `state_dir`.
    """

    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_", extra="ignore")

    nats_url: str | None = Field(default=None, validation_alias="NATS_URL")
    state_dir: Path = Path(".hackaudit")
    # A handler that runs longer than this without an in-progress ack is presumed dead.
    ack_wait_s: float = Field(default=60.0, gt=0)
    # Handlers send an in-progress ack this often while they work (long test runs).
    heartbeat_s: float = Field(default=15.0, gt=0)
    # Deliveries before a message is dead-lettered; a worker that dies mid-handler counts too.
    max_deliveries: int = Field(default=5, ge=1)
    retry_delay_s: float = Field(default=2.0, ge=0)
    duplicate_window_s: float = Field(default=2 * 3600.0, gt=0)
    stream_max_age_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    # Copies JetStream keeps of each stream (and its consumers) on a NATS cluster: 3 survives the
    # loss of one node. At most the cluster's size; 1 for a single server.
    bus_replicas: int = Field(default=1, ge=1, le=5)
