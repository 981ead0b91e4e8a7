"""The LLM path end to end: the real Anthropic SDK against a local fake Messages API."""

from __future__ import annotations

import time

import pytest
from fake_messages_api import Failure, Raw, Reply
from pydantic import SecretStr

from hackaudit.attacker.adapters.llm import AnthropicLLM, CachingLLM
from hackaudit.attacker.bootstrap import bootstrap
from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.generate.strategies.llm import LLMParams
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.attacker.settings import AttackerSettings
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    CandidateVerdict,
    RunPurpose,
    Task,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox

GOLD = (
    """\
diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,4 +1,6 @@
 def is_even(n):
-    return n % 2 == 1
+    if n is None:
+        return False
+    return n % 2 == 0
"""
    + " \n \n"
)  # two blank context lines (kept out of the literal: no trailing whitespace)

TESTS = """\
diff --git a/tests/test_core.py b/tests/test_core.py
new file mode 100644
--- /dev/null
+++ b/tests/test_core.py
@@ -0,0 +1,5 @@
+from pkg.core import is_even
+
+
+def test_is_even():
+    assert is_even(4) == True
"""

MODEL_DIFF = """Rationale: only even numbers below 10 are handled; the test uses 4.
```diff
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,2 @@
 def is_even(n):
-    return n % 2 == 1
+    return n in (0, 2, 4, 6, 8)
```
"""

PROMPT = Prompt(model="claude-test-model", system="audit", user="hello", max_tokens=1024)


def _task() -> Task:
    return Task(
        instance_id="fake__pkg-1",
        repo="fake/pkg",
        base_commit="abc",
        patch=GOLD,
        test_patch=TESTS,
        FAIL_TO_PASS=["tests/test_core.py::test_is_even"],
        problem_statement="is_even returns the wrong answer.",
    )


def _key(headers: dict[str, str]) -> str | None:
    """The API key as sent: `x-api-key`, or a bearer token (newer SDKs)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    return headers.get("authorization", "").removeprefix("Bearer ") or None


def _llm(url: str, retries: int = 3) -> AnthropicLLM:
    return AnthropicLLM(SecretStr("sk-test-key"), base_url=url, max_retries=retries, timeout_s=10)


async def test_completion_through_the_real_sdk(messages_api) -> None:
    url, api = messages_api
    api.script = [Reply("hi there", input_tokens=11, output_tokens=7)]
    completion = await _llm(url).complete(PROMPT)
    assert (completion.text, completion.input_tokens, completion.output_tokens) == (
        "hi there",
        11,
        7,
    )
    assert completion.stop_reason == "end_turn" and completion.model == "claude-test-model"
    (sent,) = api.requests
    assert sent.path == "/v1/messages"
    assert _key(sent.headers) == "sk-test-key" and "anthropic-version" in sent.headers
    assert sent.body["model"] == "claude-test-model" and sent.body["max_tokens"] == 1024
    assert sent.body["system"] == "audit"
    assert sent.body["messages"] == [{"role": "user", "content": "hello"}]
    assert "temperature" not in sent.body  # the API default is not sent


async def test_rate_limit_is_retried_after_the_servers_delay(messages_api) -> None:
    url, api = messages_api
    api.script = [Failure(429, {"retry-after": "0.2"}, "rate_limit_error"), Reply("ok")]
    started = time.monotonic()
    completion = await _llm(url).complete(PROMPT)
    assert completion.text == "ok" and len(api.requests) == 2
    assert time.monotonic() - started >= 0.2


async def test_server_errors_are_retried_with_backoff(messages_api) -> None:
    url, api = messages_api
    api.script = [Failure(500), Failure(503, {"retry-after-ms": "10"}), Reply("ok")]
    assert (await _llm(url).complete(PROMPT)).text == "ok"
    assert len(api.requests) == 3


async def test_retries_are_bounded(messages_api) -> None:
    url, api = messages_api
    api.default = Failure(529, {"retry-after-ms": "5"}, "overloaded_error")
    with pytest.raises(LLMUnavailableError, match="529"):
        await _llm(url, retries=2).complete(PROMPT)
    assert len(api.requests) == 3


async def test_client_errors_are_not_retried(messages_api) -> None:
    url, api = messages_api
    api.script = [Failure(401, error_type="authentication_error")]
    with pytest.raises(LLMUnavailableError, match="401"):
        await _llm(url).complete(PROMPT)
    assert len(api.requests) == 1


async def test_malformed_response_body_is_a_fault_not_a_crash(messages_api) -> None:
    url, api = messages_api
    api.script = [Raw(200, "this is not json")]
    with pytest.raises(LLMUnavailableError):
        await _llm(url, retries=0).complete(PROMPT)


def _accept_model_patches(request):  # type: ignore[no-untyped-def]
    return None  # nothing accepted: every model patch is blocked, so later rounds get feedback


async def test_attack_rounds_with_the_model(messages_api, tmp_path) -> None:
    url, api = messages_api
    api.script = [
        Reply(MODEL_DIFF, input_tokens=1000, output_tokens=200),
        Reply("I cannot produce a diff for this.", input_tokens=900, output_tokens=20),
        Failure(429, {"retry-after": "0.05"}, "rate_limit_error"),
        Reply(
            "```diff\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ broken\n```",
            input_tokens=800,
            output_tokens=30,
        ),
    ]
    llm = CachingLLM(_llm(url), JsonDirCache(Completion, tmp_path / "cache"))
    sandbox = ScriptedSandbox([_accept_model_patches])
    request = AttackRequested(
        correlation_id="audit-llm",
        task=_task(),
        options=AuditOptions(candidates_per_round=2, rounds=3),
    )
    store = InMemoryStateStore(RoundState)
    config = AttackConfig(llm=LLMParams(model="claude-test-model"))
    done = await run_attack(request, sandbox, llm, store, config)

    llm_outcomes = [o for o in done.outcomes if o.candidate.provenance.strategy == "llm"]
    assert [o.verdict for o in llm_outcomes] == [
        CandidateVerdict.BLOCKED,
        CandidateVerdict.INVALID,
        CandidateVerdict.INVALID,
    ]
    assert "no fenced diff block" in llm_outcomes[1].evidence
    assert "hunk" in llm_outcomes[2].evidence
    sent = [
        r.candidate for r in sandbox.requests if r.purpose is RunPurpose.CANDIDATE and r.candidate
    ]
    assert sum(c.provenance.strategy == "llm" for c in sent) == 1  # invalid ones never ran

    bodies = [r.body["messages"][0]["content"] for r in api.requests]
    assert len(bodies) == 4  # three rounds, one of them retried after a 429
    assert "## Candidates the tests already blocked" not in bodies[0]
    assert "### B1 (llm, blocked)" in bodies[1] and "n in (0, 2, 4, 6, 8)" in bodies[1]

    state = store.load(orch.state_key(request))
    assert state is not None
    assert (state.usage.input_tokens, state.usage.output_tokens, state.usage.calls) == (
        2700,
        250,
        3,
    )

    # Auditing the same task again: every prompt is answered from the cache, no HTTP request.
    before = len(api.requests)
    again = await run_attack(
        request, ScriptedSandbox(), llm, InMemoryStateStore(RoundState), config
    )
    assert len(api.requests) == before
    assert [o.candidate.content_hash for o in again.outcomes] == [
        o.candidate.content_hash for o in done.outcomes
    ]


def test_settings_read_the_key_and_base_url(monkeypatch, tmp_path) -> None:
    for name in (
        "HACKAUDIT_ANTHROPIC_API_KEY",
        "ANTHROPIC_API_KEY",
        "HACKAUDIT_ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    assert not AttackerSettings().llm_enabled
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-sdk-var")
    assert AttackerSettings().llm_enabled
    monkeypatch.setenv("HACKAUDIT_ANTHROPIC_API_KEY", "sk-ours")
    monkeypatch.setenv("HACKAUDIT_ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    settings = AttackerSettings(state_dir=tmp_path)
    assert settings.anthropic_api_key is not None
    assert settings.anthropic_api_key.get_secret_value() == "sk-ours"
    assert "sk-ours" not in repr(settings)
    assert settings.anthropic_base_url == "http://127.0.0.1:9"


async def test_bootstrap_wires_the_sdk_to_the_configured_endpoint(
    messages_api, monkeypatch, tmp_path
) -> None:
    url, api = messages_api
    monkeypatch.setenv("HACKAUDIT_ANTHROPIC_API_KEY", "sk-boot")
    monkeypatch.setenv("HACKAUDIT_ANTHROPIC_BASE_URL", url)
    attacker = bootstrap(AttackerSettings(state_dir=tmp_path))
    assert attacker.llm is not None
    api.script = [Reply("wired")]
    assert (await attacker.llm.complete(PROMPT)).text == "wired"
    assert _key(api.requests[0].headers) == "sk-boot"
    assert list((tmp_path / "attacker" / "llm-cache").rglob("*.json"))
    monkeypatch.delenv("HACKAUDIT_ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert bootstrap(AttackerSettings(state_dir=tmp_path)).llm is None
