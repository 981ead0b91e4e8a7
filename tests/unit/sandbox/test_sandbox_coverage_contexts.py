"""The plugin that names each line's coverage context after the test function running it: real
frames of code run the way pytest, unittest and sympy's `bin/test` run it, the runner's own
`test*` methods passed over."""

from __future__ import annotations

import sys
import types
from typing import Any

from hackaudit.sandbox.domain.programs import coverage_contexts_program as plugin

CAPTURE = "import sys\nFRAMES = []\n\n"


def _frames(source: str, filename: str, globals_: dict[str, Any], call: str) -> list[Any]:
    """Runs `source` (compiled as `filename`) in `globals_`, then `call` there; the frames its
    functions put in FRAMES."""
    exec(compile(CAPTURE + source, filename, "exec"), globals_)
    exec(compile(call, filename, "exec"), globals_)
    return list(globals_["FRAMES"])


def test_a_test_function_of_a_module_run_as_sympy_runs_it_is_named_after_its_path() -> None:
    source = "def test_add():\n    FRAMES.append(sys._getframe())\n"
    path = "/testbed/pkg/tests/test_ops.py"
    (frame,) = _frames(source, path, {"__file__": path}, "test_add()")
    assert plugin.test_context(frame) == "pkg.tests.test_ops.test_add"


def test_a_test_method_is_named_module_class_method() -> None:
    module = types.ModuleType("tests.test_ops")
    source = (
        "class OpsTest(object):\n    def test_add(self):\n        FRAMES.append(sys._getframe())\n"
    )
    path = "/testbed/tests/test_ops.py"
    (frame,) = _frames(source, path, module.__dict__, "OpsTest().test_add()")
    assert plugin.test_context(frame) == "tests.test_ops.OpsTest.test_add"


def test_the_runners_own_test_method_outside_a_test_file_starts_no_context() -> None:
    source = (
        "class SymPyTests(object):\n    def test(self):\n        FRAMES.append(sys._getframe())\n"
    )
    path = "/testbed/pkg/testing/runtests.py"
    module = types.ModuleType("pkg.testing.runtests")
    (frame,) = _frames(source, path, module.__dict__, "SymPyTests().test()")
    assert plugin.test_context(frame) is None
    assert plugin.test_context(sys._getframe()) is not None  # this very test, by contrast


def test_a_helper_not_named_test_starts_no_context() -> None:
    source = "def helper():\n    FRAMES.append(sys._getframe())\n"
    path = "/testbed/tests/test_ops.py"
    (frame,) = _frames(source, path, {"__name__": "tests.test_ops"}, "helper()")
    assert plugin.test_context(frame) is None


def test_test_files_are_told_by_their_names() -> None:
    for name in ("tests/test_x.py", "a/x_test.py", "a/x_tests.py", "app/tests.py", "tests.py"):
        assert plugin.is_test_file("/testbed/" + name), name
    for name in ("pkg/testing/runtests.py", "bin/test", "pkg/contest.py", "tests/conftest.py"):
        assert not plugin.is_test_file("/testbed/" + name), name
    assert plugin.module_of_path("/testbed/pkg/tests/test_x.py") == "pkg.tests.test_x"
