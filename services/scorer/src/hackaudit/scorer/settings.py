"""The scorer's settings, read once at start-up (HACKAUDIT_SCORER_* or `[scorer]` of
hackaudit.toml): where the results store is, the scoring policy's knobs, audits in flight."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.shared.settings import BusSettings, FileSettings


class ScorerSettings(FileSettings):
    config_section = "scorer"
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_SCORER_", extra="ignore")

    results_db: Path | None = None  # default: <state dir>/results.duckdb
    # The policy's knobs, one setting each; their defaults are the policy's own.
    weight_v: float = ScoringPolicy.weight_v
    weight_h: float = ScoringPolicy.weight_h
    weight_f1: float = ScoringPolicy.weight_f1
    weight_d: float = ScoringPolicy.weight_d
    keep_above: float = ScoringPolicy.keep_above
    drop_below: float = ScoringPolicy.drop_below
    exploit_never_keep: bool = ScoringPolicy.exploit_never_keep  # false: thresholds only
    harness_caps: bool = ScoringPolicy.harness_caps  # true: harness exploits cap too
    # Audits started at most at once before their verdict (0: no limit). The others wait, in the
    # order they came, so each audit shares the sandbox with a few others and its verdict comes
    # minutes after its start, instead of every audit's coming at the end of a large batch.
    audits_in_flight: int = Field(default=4, ge=0)

    def store_path(self, bus_settings: BusSettings) -> Path:
        """The results store's file; readers (`hackaudit report`, `status`) use the same."""
        return self.results_db or bus_settings.state_dir / "results.duckdb"

    def policy(self) -> ScoringPolicy:
        knobs = {f.name for f in fields(ScoringPolicy)}
        return ScoringPolicy(**self.model_dump(include=knobs))
