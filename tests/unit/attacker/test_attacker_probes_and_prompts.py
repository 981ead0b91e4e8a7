"""The LLM prompt and reply parsing, and the state/cache stores."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.generate.strategies.base import Feedback, ProposalContext
from hackaudit.attacker.domain.generate.strategies.llm import (
    LLMParams,
    build_prompt,
    parse_reply,
)
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.ports import Completion, Prompt
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.contracts import (
    AttackRequested,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Provenance,
    RunResult,
    RunStatus,
)
from hackaudit.shared.state_store import JsonFileStateStore


def _feedback() -> tuple[Feedback, ...]:
    blocked = Candidate(
        instance_id="t",
        diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        provenance=Provenance(strategy="mutation", detail="== -> !="),
    )
    return (
        Feedback(
            label="B1",
            candidate=blocked,
            verdict="blocked",
            log="FAILED tests/test_x.py::test_y " + "x" * 5000,
        ),
    )


def test_prompt_round_one_and_follow_up(tiny) -> None:
    params = LLMParams(model="claude-test", max_log_chars=500)
    first = build_prompt(tiny.task, ProposalContext(round=1, budget=3), params)
    assert first.model == "claude-test"
    assert "test-suite audit" in first.user.lower() and "incorrect" in first.user
    assert "Write 3 different patches" in first.user
    assert tiny.task.patch.strip() in first.user
    assert (
        "tests/test_core.py::test_is_even" in first.user
        and "tests/test_core.py::test_clamp" in first.user
    )
    assert "already blocked" not in first.user
    follow = build_prompt(
        tiny.task, ProposalContext(round=2, budget=2, feedback=_feedback()), params
    )
    assert "### B1 (mutation, blocked): == -> !=" in follow.user
    assert "characters cut" in follow.user and len(follow.user) < len(first.user) + 2000
    assert follow.cache_key != first.cache_key


def test_parse_reply_valid_invalid_and_refines(tiny) -> None:
    text = (
        "Rationale: forgets None.\nRefines: B1\n```diff\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
        "@@ -15,2 +15,2 @@\n def is_even(n):\n-    return n % 2 == 1\n"
        "+    return n % 2 == 0\n \n```\n"
        "Rationale: broken.\n```diff\n@@ garbage\n```\n"
    )
    valid, invalid = parse_reply(tiny.task, Completion(text=text), 2, {"B1": "t:abc"})
    assert valid.provenance.detail == "forgets None." and valid.provenance.parent_id == "t:abc"
    assert valid.provenance.round == 2 and valid.diff.startswith(
        "diff --git a/pkg/core.py b/pkg/core.py\n"
    )
    assert "@@ -15,3 +15,3 @@" in valid.diff  # the model's miscounted header is recomputed
    assert tiny.applies(valid.diff) == (True, "")
    assert invalid.provenance.detail == "broken." and invalid.provenance.invalid
    assert orch.invalid_reason(invalid) is not None and orch.invalid_reason(valid) is None


def test_reply_without_diff_is_one_invalid_candidate(tiny) -> None:
    (only,) = parse_reply(tiny.task, Completion(text="Sorry.", stop_reason="end_turn"), 1)
    assert (
        orch.invalid_reason(only) == "no fenced diff block in model output (stop_reason=end_turn)"
    )


def test_json_state_store_round_trip(tiny, tmp_path) -> None:
    store = JsonFileStateStore(RoundState, tmp_path / "rounds")
    state = orch.new_state(AttackRequested(correlation_id="c", task=tiny.task))
    assert store.load(state.key) is None
    outcome = CandidateOutcome(
        candidate=Candidate(instance_id="t", diff="x"),
        verdict=CandidateVerdict.BLOCKED,
        evidence="e",
    )
    state = orch.record(state, outcome).model_copy(
        update={"gold_runs": {"gold": (RunResult(status=RunStatus.COMPLETED),)}}
    )
    store.save(state)
    assert store.load(state.key) == state
    assert [p.name for p in (tmp_path / "rounds").iterdir()] == [f"{state.key}.json"]


def test_json_completion_cache(tmp_path) -> None:
    cache = JsonDirCache(Completion, tmp_path)
    key = Prompt(model="m", system="s", user="u").cache_key
    assert cache.get(key) is None
    cache.put(key, Completion(text="hi", input_tokens=3))
    assert JsonDirCache(Completion, tmp_path).get(key) == Completion(text="hi", input_tokens=3)
    (tmp_path / key[:2] / f"{key}.json").write_text("{broken")
    assert cache.get(key) is None
    with pytest.raises(ValueError, match="hex"):
        cache.get("../../etc/passwd")


def test_prompt_cache_key_covers_model_and_parameters() -> None:
    base = Prompt(model="m", system="s", user="u")
    assert base.cache_key == Prompt(model="m", system="s", user="u").cache_key
    assert base.cache_key != Prompt(model="m2", system="s", user="u").cache_key
    assert base.cache_key != Prompt(model="m", system="s", user="u", temperature=0.5).cache_key
