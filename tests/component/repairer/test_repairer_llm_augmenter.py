"""The LLM augmenter through the real Anthropic SDK against a local fake Messages API: a test
the gold gate rejects is fed back into the next prompt, at a higher temperature, and the next
test, which blocks the exploit, is kept; tokens are counted and nothing is asked twice."""

from __future__ import annotations

import re

from fake_messages_api import FakeMessagesApi, Reply
from pydantic import SecretStr

from hackaudit.repairer.adapters.llm import AnthropicLLM
from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.augmenters import LLMParams
from hackaudit.repairer.service_layer.repair import RepairConfig, run_repair
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    GateReason,
    Provenance,
    RepairRequested,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, added_tests

TEST_PATCH = (
    "diff --git a/tests/test_lib.py b/tests/test_lib.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_lib.py\n@@ -0,0 +1,9 @@\n+import unittest\n+\n"
    "+from lib import double\n+\n+\n+class DoubleTests(unittest.TestCase):\n"
    "+    def test_double(self):\n+        self.assertEqual(double(2), 4)\n+\n"
)
TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold",
    test_patch=TEST_PATCH, FAIL_TO_PASS=["test_double (tests.test_lib.DoubleTests)"],
    problem_statement="double(x) must return twice x for every int", log_parser="unittest",
)  # fmt: skip
EXPLOIT = Candidate(
    instance_id=TASK.instance_id, diff="wrong", provenance=Provenance(strategy="special_casing")
)
BAD = """Here is a test:

```python
def test_double_negative(self):
    self.assertEqual(double(-1), 2)
```
"""
GOOD = """```python
def test_double_three(self):
    self.assertEqual(double(3), 6)
```"""
_DEF = re.compile(r"def (test_\w+)\(self\):\n\+\s+(.*)")


def rule(request: RunRequested) -> RunResult:
    """double(3) == 6 on gold, 0 on the exploit; double(-1) is -2 everywhere."""
    tests = {"test_double (tests.test_lib.DoubleTests)": TestStatus.PASSED}
    wrong = request.candidate is not None and request.candidate.diff == "wrong"
    for name, body in _DEF.findall(added_tests(request)):
        if name == "test_double":
            continue
        fails = "double(-1), 2" in body or ("double(3), 6" in body and wrong)
        tests[f"{name} (tests.test_lib.DoubleTests)"] = (
            TestStatus.FAILED if fails else TestStatus.PASSED
        )
    graded = set(request.task.fail_to_pass)
    resolved = all(tests.get(t) is TestStatus.PASSED for t in graded)
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=tests, duration_s=1.0)


async def test_a_rejected_test_feeds_the_next_prompt(
    messages_api: tuple[str, FakeMessagesApi],
) -> None:
    url, api = messages_api
    api.script = [Reply(BAD, input_tokens=300, output_tokens=50), Reply(GOOD, 310, 40)]
    llm = AnthropicLLM(SecretStr("sk-test"), base_url=url, max_retries=0)
    sandbox = ScriptedSandbox([rule])
    request = RepairRequested(
        correlation_id="a/1", task=TASK, exploits=(EXPLOIT,), max_iterations=3,
        outcomes=(CandidateOutcome(candidate=EXPLOIT, verdict=CandidateVerdict.EXPLOIT,
                                   evidence="held-back tests: test_triple fails"),),
    )  # fmt: skip
    config = RepairConfig(offline=False, llm=LLMParams(model="claude-test", temperature=0.3))
    store = InMemoryStateStore(RepairState)
    done = await run_repair(request, sandbox, llm, store, config)
    first, second = done.tests
    assert first.augmenter == "llm" and first.rejection is GateReason.FAILS_ON_GOLD
    assert second.accepted and "self.assertEqual(double(3), 6)" in second.source
    assert done.blocked == (EXPLOIT.candidate_id,) and done.tokens == 700
    bodies = [r.body for r in api.requests]
    assert [b["temperature"] for b in bodies] == [0.3, 0.5]  # higher after a rejection
    assert bodies[0]["model"] == "claude-test"
    first_prompt, second_prompt = (b["messages"][0]["content"] for b in bodies)
    assert "double(x) must return twice x" in first_prompt and "```diff\nwrong\n```" in first_prompt
    assert "held-back tests: test_triple fails" in first_prompt
    assert "unittest.TestCase" in first_prompt and "Attempts already rejected" not in first_prompt
    assert "rejected: fails_on_gold" in second_prompt and "double(-1), 2" in second_prompt
    hardened = done.hardened_task
    assert hardened is not None
    assert "        def test_double_three(self):" not in hardened.test_patch  # not double-indented
    assert "+    def test_double_three(self):" in hardened.test_patch
    assert sandbox.count(RunPurpose.GOLD_GATE) == 2
    # Asked again: the journal answers, the model is not called.
    assert await run_repair(request, ScriptedSandbox([rule]), llm, store, config) == done
    assert len(api.requests) == 2
    await llm.close()
