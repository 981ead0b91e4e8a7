"""The LLM path on an OpenAI-compatible endpoint: the real openai SDK against a local fake."""

from __future__ import annotations

import json
import time

import pytest
from fake_messages_api import Failure, Raw, Reply
from pydantic import SecretStr

from hackaudit.attacker.adapters.llm import CachingLLM
from hackaudit.attacker.adapters.openai_chat import OpenAIChatLLM
from hackaudit.attacker.bootstrap import bootstrap
from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.generate.strategies.base import ProposalContext
from hackaudit.attacker.domain.generate.strategies.llm import LLMParams, LLMStrategy
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.attacker.settings import AttackerSettings
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.contracts import AttackRequested, AuditOptions, CandidateVerdict, Task
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox

GOLD = """\
diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,2 @@
 def is_even(n):
-    return n % 2 == 1
+    return n % 2 == 0
"""

TESTS = """\
diff --git a/tests/test_core.py b/tests/test_core.py
new file mode 100644
--- /dev/null
+++ b/tests/test_core.py
@@ -0,0 +1,4 @@
+from pkg.core import is_even
+
+def test_is_even():
+    assert is_even(4) == True
"""

MODEL_DIFF = """Rationale: only small even numbers are handled; the test uses 4.
```diff
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,2 @@
 def is_even(n):
-    return n % 2 == 1
+    return n in (0, 2, 4, 6, 8)
```
"""

PROMPT = Prompt(model="gpt-test", system="audit", user="hello", max_tokens=1024)

_PROVIDER_VARS = (
    "HACKAUDIT_LLM_PROVIDER",
    "HACKAUDIT_LLM_BASE_URL",
    "HACKAUDIT_LLM_MODEL",
    "HACKAUDIT_OPENAI_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "HACKAUDIT_ANTHROPIC_API_KEY",
    "ANTHROPIC_API_KEY",
    "HACKAUDIT_ANTHROPIC_BASE_URL",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch) -> None:
    for name in _PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)


def _task() -> Task:
    return Task(
        instance_id="fake__pkg-2",
        repo="fake/pkg",
        base_commit="abc",
        patch=GOLD,
        test_patch=TESTS,
        FAIL_TO_PASS=["tests/test_core.py::test_is_even"],
        problem_statement="is_even returns the wrong answer.",
    )


def _llm(url: str, retries: int = 3, **kwargs) -> OpenAIChatLLM:  # type: ignore[no-untyped-def]
    return OpenAIChatLLM(
        SecretStr("sk-openai-test"), base_url=url, max_retries=retries, timeout_s=10, **kwargs
    )


async def test_completion_through_the_real_sdk(chat_api) -> None:
    url, api = chat_api
    api.script = [Reply("hi there", input_tokens=11, output_tokens=7)]
    completion = await _llm(url).complete(PROMPT)
    assert (completion.text, completion.input_tokens, completion.output_tokens) == (
        "hi there",
        11,
        7,
    )
    assert completion.stop_reason == "stop" and completion.model == "gpt-test"
    assert not completion.cached
    (sent,) = api.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-openai-test"
    assert sent.body["model"] == "gpt-test" and sent.body["max_tokens"] == 1024
    assert sent.body["messages"] == [
        {"role": "system", "content": "audit"},
        {"role": "user", "content": "hello"},
    ]
    assert "temperature" not in sent.body and "max_completion_tokens" not in sent.body


async def test_output_limit_parameter_and_temperature_are_configurable(chat_api) -> None:
    url, api = chat_api
    api.script = [Reply("ok")]
    prompt = PROMPT.model_copy(update={"temperature": 0.2})
    await _llm(url, output_limit_param="max_completion_tokens").complete(prompt)
    (sent,) = api.requests
    assert sent.body["max_completion_tokens"] == 1024 and "max_tokens" not in sent.body
    assert sent.body["temperature"] == 0.2


async def test_rate_limit_is_retried_after_the_servers_delay(chat_api) -> None:
    url, api = chat_api
    api.script = [Failure(429, {"retry-after": "0.3"}, "rate_limit_exceeded"), Reply("ok")]
    started = time.monotonic()
    completion = await _llm(url).complete(PROMPT)
    assert completion.text == "ok" and len(api.requests) == 2
    assert time.monotonic() - started >= 0.3


async def test_server_error_then_success(chat_api) -> None:
    url, api = chat_api
    api.script = [Failure(500, {"retry-after-ms": "10"}), Reply("ok", 5, 3)]
    completion = await _llm(url).complete(PROMPT)
    assert completion.text == "ok" and (completion.input_tokens, completion.output_tokens) == (5, 3)
    assert len(api.requests) == 2


async def test_retries_are_bounded_and_client_errors_not_retried(chat_api) -> None:
    url, api = chat_api
    api.default = Failure(503, {"retry-after-ms": "5"})
    with pytest.raises(LLMUnavailableError, match="503"):
        await _llm(url, retries=2).complete(PROMPT)
    assert len(api.requests) == 3
    api.default = None
    api.script = [Failure(401, error_type="invalid_api_key")]
    with pytest.raises(LLMUnavailableError, match="401"):
        await _llm(url).complete(PROMPT)
    assert len(api.requests) == 4


async def test_non_json_body_is_a_fault_not_a_crash(chat_api) -> None:
    url, api = chat_api
    api.script = [Raw(200, "this is not json")]
    with pytest.raises(LLMUnavailableError, match="unreadable"):
        await _llm(url, retries=0).complete(PROMPT)


@pytest.mark.parametrize(
    ("body", "stop_reason"),
    [
        # no choices at all, and no usage block (some compatible servers omit it)
        ({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}, None),
        # a choice whose content is null (e.g. a refusal or a tool-call-only answer)
        (
            {
                "id": "x",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None},
                        "finish_reason": "content_filter",
                    }
                ],
                "usage": {"prompt_tokens": 9, "completion_tokens": 0, "total_tokens": 9},
            },
            "content_filter",
        ),
        # a JSON body of the wrong shape altogether
        ({"unexpected": True}, None),
    ],
)
async def test_malformed_reply_becomes_an_invalid_candidate(chat_api, body, stop_reason) -> None:
    url, api = chat_api
    api.script = [Raw(200, json.dumps(body))]
    strategy = LLMStrategy(_llm(url, retries=0), LLMParams(model="gpt-test"))
    (candidate,) = await strategy.propose(_task(), ProposalContext(round=1, budget=2))
    reason = orch.invalid_reason(candidate)
    assert reason is not None and reason.startswith("no fenced diff block")
    assert f"stop_reason={stop_reason or 'no_choice'}" in reason
    (completion,) = strategy.completions
    assert completion.text == ""


async def test_attack_with_an_openai_endpoint_counts_tokens_and_caches(chat_api, tmp_path) -> None:
    url, api = chat_api
    api.script = [
        Failure(429, {"retry-after": "0.05"}, "rate_limit_exceeded"),
        Reply(MODEL_DIFF, input_tokens=1000, output_tokens=200),
        Reply("No diff this time.", input_tokens=900, output_tokens=20),
    ]
    llm = CachingLLM(_llm(url), JsonDirCache(Completion, tmp_path / "cache"))
    request = AttackRequested(
        correlation_id="audit-openai",
        task=_task(),
        options=AuditOptions(candidates_per_round=2, rounds=2),
    )
    store = InMemoryStateStore(RoundState)
    config = AttackConfig(llm=LLMParams(model="gpt-test"))
    done = await run_attack(request, ScriptedSandbox(), llm, store, config)

    llm_outcomes = [o for o in done.outcomes if o.candidate.provenance.strategy == "llm"]
    assert [o.verdict for o in llm_outcomes] == [
        CandidateVerdict.BLOCKED,
        CandidateVerdict.INVALID,
    ]
    user_prompts = [r.body["messages"][1]["content"] for r in api.requests]
    assert len(user_prompts) == 3  # two rounds, the first retried after a 429
    assert "## Test patch" in user_prompts[0] and "+def test_is_even():" in user_prompts[0]
    assert "     2 |     return n % 2 == 1" in user_prompts[0]  # base code, numbered
    assert "### B1 (llm, blocked)" in user_prompts[2]

    state = store.load(orch.state_key(request))
    assert state is not None
    assert (state.usage.input_tokens, state.usage.output_tokens, state.usage.calls) == (
        1900,
        220,
        2,
    )

    # The same audit again: both prompts are answered from the cache, no HTTP request is made.
    before = len(api.requests)
    again = await run_attack(
        request, ScriptedSandbox(), llm, InMemoryStateStore(RoundState), config
    )
    assert len(api.requests) == before
    assert [o.candidate.content_hash for o in again.outcomes] == [
        o.candidate.content_hash for o in done.outcomes
    ]


def test_settings_choose_the_provider(monkeypatch, tmp_path) -> None:
    assert not AttackerSettings().llm_enabled
    monkeypatch.setenv("HACKAUDIT_LLM_PROVIDER", "openai")
    assert not AttackerSettings().llm_enabled  # neither key nor endpoint
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-sdk-var")
    settings = AttackerSettings()
    assert settings.llm_enabled and settings.llm_model_name == "gpt-4.1"
    monkeypatch.setenv("HACKAUDIT_OPENAI_API_KEY", "sk-ours")
    monkeypatch.setenv("HACKAUDIT_LLM_MODEL", "local-coder")
    settings = AttackerSettings(state_dir=tmp_path)
    assert settings.llm_api_key is not None
    assert settings.llm_api_key.get_secret_value() == "sk-ours"
    assert "sk-ours" not in repr(settings)
    assert settings.attack_config().llm.model == "local-coder"
    # An Anthropic key does not enable the openai provider, nor the other way round.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("HACKAUDIT_OPENAI_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert not AttackerSettings().llm_enabled
    monkeypatch.setenv("HACKAUDIT_LLM_PROVIDER", "anthropic")
    assert AttackerSettings().llm_model_name == "local-coder"
    monkeypatch.setenv("HACKAUDIT_ANTHROPIC_BASE_URL", "http://127.0.0.1:8")
    assert AttackerSettings().llm_endpoint == "http://127.0.0.1:8"
    monkeypatch.setenv("HACKAUDIT_LLM_BASE_URL", "http://127.0.0.1:9")
    assert AttackerSettings().llm_endpoint == "http://127.0.0.1:9"  # the generic setting wins
    with pytest.raises(ValueError, match="llm_provider"):
        AttackerSettings(llm_provider="gemini")  # type: ignore[arg-type]


async def test_bootstrap_wires_the_openai_sdk_to_the_configured_endpoint(
    chat_api, monkeypatch, tmp_path
) -> None:
    url, api = chat_api
    monkeypatch.setenv("HACKAUDIT_LLM_PROVIDER", "openai")
    monkeypatch.setenv("HACKAUDIT_LLM_BASE_URL", url)
    monkeypatch.setenv("HACKAUDIT_LLM_PROMPT_BUDGET_TOKENS", "5000")
    attacker = bootstrap(AttackerSettings(state_dir=tmp_path))  # no key: a self-hosted server
    assert attacker.llm is not None
    assert attacker.config.llm.prompt_budget_tokens == 5000
    api.script = [Reply("wired")]
    assert (await attacker.llm.complete(PROMPT)).text == "wired"
    assert api.requests[0].headers["authorization"] == "Bearer unused"
    assert list((tmp_path / "attacker" / "llm-cache").rglob("*.json"))
    monkeypatch.setenv("HACKAUDIT_OPENAI_API_KEY", "sk-boot")
    attacker = bootstrap(AttackerSettings(state_dir=tmp_path / "other"))
    assert attacker.llm is not None
    api.script = [Reply("keyed")]
    assert (await attacker.llm.complete(PROMPT)).text == "keyed"
    assert api.requests[1].headers["authorization"] == "Bearer sk-boot"
