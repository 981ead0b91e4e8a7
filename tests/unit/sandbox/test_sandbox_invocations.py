# ruff: noqa: E501  (the old commands are kept as the literal strings they were)
"""The commands the sandbox builds from a typed invocation, per runner and invocation kind: the
ones the producers built.

Before run requests carried an invocation, the attacker and the repairer rewrote the task
(`test_command`, `log_parser`, FAIL_TO_PASS) for each probe, capture and wider-suite run, and
the sandbox built the command from that task. `OLD` holds, as literals, what that old code built
for a few task shapes (captured from it before it was removed); every invocation must give the
same command, parser and exported variables. The one intended difference: the producers hid the
sandbox's test-patch directives in a trailing shell comment (`... # {tests}`), which runs
nothing; the new commands carry no such comment. Exported variables are compared as sets: they
now come in the order of the SWE-bench harness's own eval commands.
"""

from __future__ import annotations

from typing import Any

import pytest

from hackaudit.sandbox.domain import wider_suite
from hackaudit.sandbox.domain.run_spec import RunOptions, graded_task, prepare_run, run_test_patch
from hackaudit.sandbox.domain.runners import NoCommand, RunnerInvocation, command_for, runner_kind
from hackaudit.shared.contracts import (
    Candidate,
    Capture,
    Grade,
    Invocation,
    Probe,
    RunResult,
    RunStatus,
    Suite,
    Task,
)

JUNIT = "/tmp/r.xml"
GOLD = (
    "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
    "@@ -1 +1,2 @@\n x = 1\n+y = 2\n"
)


def _diff(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1,2 @@\n x = 1\n+y = 2\n"
        for p in paths
    )


def _task(**fields: Any) -> Task:
    base: dict[str, Any] = {
        "instance_id": "i-1",
        "repo": "example/tiny",
        "base_commit": "abc",
        "image": "img",
        "patch": GOLD,
        "FAIL_TO_PASS": ["t"],
    }
    return Task(**(base | fields))


SHAPES: dict[str, Task] = {
    "pytest": _task(
        test_command="pytest -rA tests/test_core.py",
        log_parser="pytest",
        test_patch=_diff("tests/test_core.py"),
    ),
    "pytest-prefix": _task(
        test_command="PYTHONPATH=src python -m pytest -x -k 'foo or bar' tests/test_a.py::test_b",
        log_parser="pytest",
        test_patch=_diff("tests/test_a.py", "tests/sub/test_c.py"),
    ),
    "pytest-default": _task(test_patch=_diff("tests/test_core.py")),
    "pytest-placeholder": _task(
        test_command="pytest {tests} -q", test_patch=_diff("tests/test_core.py")
    ),
    "unittest": _task(
        test_command="python -m unittest -v tests.test_core",
        log_parser="unittest",
        test_patch=_diff("tests/test_core.py"),
    ),
    "unittest-two-dirs": _task(
        test_command="python3 -m unittest -v",
        log_parser="unittest",
        test_patch=_diff("tests/test_core.py", "other/test_x.py"),
    ),
    "django": _task(
        repo="django/django",
        version="3.0",
        log_parser="django",
        test_patch=_diff("tests/admin_views/tests.py", "tests/admin_views/models.py"),
    ),
    "django-22": _task(
        repo="django/django", version="2.2", test_patch=_diff("tests/queries/tests.py")
    ),
    "sympy": _task(
        repo="sympy/sympy",
        version="1.11",
        log_parser="sympy",
        test_patch=_diff("sympy/core/tests/test_basic.py"),
    ),
    "sympy-old": _task(
        repo="sympy/sympy", version="0.7", test_patch=_diff("sympy/core/tests/test_basic.py")
    ),
    "sphinx": _task(
        repo="sphinx-doc/sphinx",
        version="3.5",
        test_command="tox --current-env -epy39 -v --",
        log_parser="pytest",
        test_patch=_diff("tests/test_build.py"),
    ),
    "sphinx-nocmd": _task(
        repo="sphinx-doc/sphinx", version="4.0", test_patch=_diff("tests/test_build.py")
    ),
    "astropy-13": _task(
        repo="astropy/astropy", version="1.3", test_patch=_diff("astropy/io/tests/test_x.py")
    ),
    "make": _task(
        test_command="make test", log_parser="pytest", test_patch=_diff("tests/test_core.py")
    ),
}
# The test patch's test directories, as the attacker reads them for a suite near the tests.
NEAR: dict[str, tuple[str, ...]] = {
    "pytest": ("tests",),
    "pytest-prefix": ("tests", "tests/sub"),
    "pytest-default": ("tests",),
    "pytest-placeholder": ("tests",),
    "unittest": ("tests",),
    "unittest-two-dirs": ("other", "tests"),
    "django": ("tests/admin_views",),
    "django-22": ("tests/queries",),
    "sympy": ("sympy/core/tests",),
    "sympy-old": ("sympy/core/tests",),
    "sphinx": ("tests",),
    "sphinx-nocmd": ("tests",),
    "astropy-13": ("astropy/io/tests",),
    "make": ("tests",),
}
PROBE = "test_hackaudit_probe.py"
CAPTURE = "test_hackaudit_capture.py"
RERUN = ("tests/test_core.py", "tests/b c.py")

Expected = tuple[str, str, tuple[str, ...]] | None

# What the old code built: (command, parser, exports) by shape and invocation; None: no run.
# (A run of given test files no longer adds the test patch's files: they are exactly those.)
OLD: dict[str, dict[str, Expected]] = {
    "pytest": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": ("pytest -rA tests --junitxml=/tmp/r.xml tests/test_core.py", "pytest", ()),
        "suite-full": ("pytest -rA --junitxml=/tmp/r.xml tests/test_core.py", "pytest", ()),
        "suite-files": (
            "pytest -rA tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "pytest-prefix": {
        "probe": (
            'PYTHONPATH=src PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_a tests.sub.test_c test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            'PYTHONPATH=src "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_a tests.sub.test_c test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "PYTHONPATH=src python -m pytest -rA -x tests tests/sub --junitxml=/tmp/r.xml tests/test_a.py tests/sub/test_c.py",
            "pytest",
            (),
        ),
        "suite-full": (
            "PYTHONPATH=src python -m pytest -rA -x --junitxml=/tmp/r.xml tests/test_a.py tests/sub/test_c.py",
            "pytest",
            (),
        ),
        "suite-files": (
            "PYTHONPATH=src python -m pytest -rA -x tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "pytest-default": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": ("pytest -rA tests --junitxml=/tmp/r.xml tests/test_core.py", "pytest", ()),
        "suite-full": ("pytest -rA --junitxml=/tmp/r.xml tests/test_core.py", "pytest", ()),
        "suite-files": (
            "pytest -rA tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "pytest-placeholder": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "pytest -rA 'tests/test_core.py' -q tests --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
        "suite-full": ("pytest -rA 'tests/test_core.py' -q --junitxml=/tmp/r.xml", "pytest", ()),
        "suite-files": (
            "pytest -rA -q tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "unittest": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "python -m unittest discover -v -s tests -t . # tests.test_core",
            "unittest",
            (),
        ),
        "suite-full": (
            "python -m unittest discover -v -s . -t . # tests.test_core",
            "unittest",
            (),
        ),
        "suite-files": None,
    },
    "unittest-two-dirs": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core other.test_x test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core other.test_x test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "python -m unittest discover -v -s . -t . # tests.test_core other.test_x",
            "unittest",
            (),
        ),
        "suite-full": (
            "python -m unittest discover -v -s . -t . # tests.test_core other.test_x",
            "unittest",
            (),
        ),
        "suite-files": None,
    },
    "django": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.admin_views.tests tests.admin_views.models test_hackaudit_probe',
            "unittest",
            ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.admin_views.tests tests.admin_views.models test_hackaudit_capture',
            "unittest",
            ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"),
        ),
        "suite-near": (
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views # admin_views.tests admin_views.models",
            "django",
            ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"),
        ),
        "suite-full": (
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 # admin_views.tests admin_views.models",
            "django",
            ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"),
        ),
        "suite-files": None,
    },
    "django-22": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.queries.tests test_hackaudit_probe',
            "unittest",
            (
                "LANG=en_US.UTF-8",
                "LC_ALL=en_US.UTF-8",
                "LANGUAGE=en_US:en",
                "PYTHONIOENCODING=utf8",
            ),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.queries.tests test_hackaudit_capture',
            "unittest",
            (
                "LANG=en_US.UTF-8",
                "LC_ALL=en_US.UTF-8",
                "LANGUAGE=en_US:en",
                "PYTHONIOENCODING=utf8",
            ),
        ),
        "suite-near": (
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 queries # queries.tests",
            "django",
            (
                "LANG=en_US.UTF-8",
                "LC_ALL=en_US.UTF-8",
                "LANGUAGE=en_US:en",
                "PYTHONIOENCODING=utf8",
            ),
        ),
        "suite-full": (
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 # queries.tests",
            "django",
            (
                "LANG=en_US.UTF-8",
                "LC_ALL=en_US.UTF-8",
                "LANGUAGE=en_US:en",
                "PYTHONIOENCODING=utf8",
            ),
        ),
        "suite-files": None,
    },
    "sympy": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # sympy.core.tests.test_basic test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # sympy.core.tests.test_basic test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
        "suite-full": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
        "suite-files": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose tests/test_core.py 'tests/b c.py' # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
    },
    "sympy-old": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # sympy.core.tests.test_basic test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # sympy.core.tests.test_basic test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
        "suite-full": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
        "suite-files": (
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose tests/test_core.py 'tests/b c.py' # sympy/core/tests/test_basic.py",
            "sympy",
            (),
        ),
    },
    "sphinx": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_build test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_build test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": ("tox --current-env -epy39 -v -- tests # tests/test_build.py", "pytest", ()),
        "suite-full": ("tox --current-env -epy39 -v -- # tests/test_build.py", "pytest", ()),
        "suite-files": (
            "tox --current-env -epy39 -v -- tests/test_core.py 'tests/b c.py' # tests/test_build.py",
            "pytest",
            (),
        ),
    },
    "sphinx-nocmd": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_build test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_build test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": ("pytest -rA tests --junitxml=/tmp/r.xml tests/test_build.py", "pytest", ()),
        "suite-full": ("pytest -rA --junitxml=/tmp/r.xml tests/test_build.py", "pytest", ()),
        "suite-files": (
            "pytest -rA tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "astropy-13": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # astropy.io.tests.test_x test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # astropy.io.tests.test_x test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": (
            "pytest -rA astropy/io/tests --junitxml=/tmp/r.xml astropy/io/tests/test_x.py",
            "pytest",
            (),
        ),
        "suite-full": ("pytest -rA --junitxml=/tmp/r.xml astropy/io/tests/test_x.py", "pytest", ()),
        "suite-files": (
            "pytest -rA tests/test_core.py 'tests/b c.py' --junitxml=/tmp/r.xml",
            "pytest",
            (),
        ),
    },
    "make": {
        "probe": (
            'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe # tests.test_core test_hackaudit_probe',
            "unittest",
            (),
        ),
        "capture": (
            '"$(command -v python || command -v python3)" -m unittest -v test_hackaudit_capture # tests.test_core test_hackaudit_capture',
            "unittest",
            (),
        ),
        "suite-near": None,
        "suite-full": None,
        "suite-files": None,
    },
}
OLD_GRADE: dict[str, Expected] = {
    "pytest": (
        "pytest -rA tests/test_core.py --junitxml=/tmp/r.xml tests/test_core.py",
        "pytest",
        (),
    ),
    "pytest-prefix": (
        "PYTHONPATH=src python -m pytest -x -k 'foo or bar' tests/test_a.py::test_b -rA --junitxml=/tmp/r.xml tests/test_a.py tests/sub/test_c.py",
        "pytest",
        (),
    ),
    "pytest-default": ("pytest -rA --junitxml=/tmp/r.xml tests/test_core.py", "pytest", ()),
    "pytest-placeholder": ("pytest tests/test_core.py -q -rA --junitxml=/tmp/r.xml", "pytest", ()),
    "unittest": ("python -m unittest -v tests.test_core tests.test_core", "unittest", ()),
    "unittest-two-dirs": ("python3 -m unittest -v tests.test_core other.test_x", "unittest", ()),
    "django": (
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests admin_views.models",
        "django",
        ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"),
    ),
    "django-22": (
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 queries.tests",
        "django",
        ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en", "PYTHONIOENCODING=utf8"),
    ),
    "sympy": (
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests/test_basic.py",
        "sympy",
        (),
    ),
    "sympy-old": (
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests/test_basic.py",
        "sympy",
        (),
    ),
    "sphinx": (
        "tox --current-env -epy39 -v -- -rA --junitxml=/tmp/r.xml tests/test_build.py",
        "pytest",
        (),
    ),
    "sphinx-nocmd": (
        "tox --current-env -epy39 -v -- -rA --junitxml=/tmp/r.xml tests/test_build.py",
        "pytest",
        (),
    ),
    "astropy-13": (
        "pytest -rA -vv -o console_output_style=classic --tb=no --junitxml=/tmp/r.xml astropy/io/tests/test_x.py",
        "pytest",
        (),
    ),
    "make": ("make test tests/test_core.py", "pytest", ()),
}


def _invocation(kind: str, shape: str) -> Invocation:
    if kind == "probe":
        return Probe(
            files={PROBE: "x = 1\n"},
            test=PROBE,
            loaded="HackauditProbe.test_hackaudit_probe_loaded",
        )
    if kind == "capture":
        return Capture(
            files={CAPTURE: "x = 1\n"},
            test=CAPTURE,
            loaded="HackauditCapture.test_hackaudit_capture_loaded",
        )
    if kind == "suite-near":
        return Suite(dirs=NEAR[shape])
    if kind == "suite-full":
        return Suite()
    assert kind == "suite-files"
    return Suite(dirs=NEAR[shape], files=RERUN)


def _without_comment(command: str) -> str:
    """The old command without its trailing shell comment (it ran nothing)."""
    return command.split(" # ", 1)[0]


def _built(task: Task, invocation: Invocation) -> RunnerInvocation:
    return command_for(task, invocation, run_test_patch(task, invocation, None), JUNIT)


CASES = [(shape, kind) for shape, kinds in OLD.items() for kind in kinds]


@pytest.mark.parametrize(("shape", "kind"), CASES, ids=[f"{s}-{k}" for s, k in CASES])
def test_the_sandbox_builds_what_the_producers_built(shape: str, kind: str) -> None:
    task, expected = SHAPES[shape], OLD[shape][kind]
    invocation = _invocation(kind, shape)
    if expected is None:
        with pytest.raises(NoCommand):
            _built(task, invocation)
        return
    built = _built(task, invocation)
    command, parser, exports = expected
    assert built.command == _without_comment(command)
    assert built.parser == parser
    assert sorted(built.exports) == sorted(exports)


@pytest.mark.parametrize("shape", list(OLD_GRADE))
def test_graded_runs_keep_their_commands(shape: str) -> None:
    expected = OLD_GRADE[shape]
    assert expected is not None
    built = _built(SHAPES[shape], Grade())
    assert (built.command, built.parser) == expected[:2]
    assert sorted(built.exports) == sorted(expected[2])


def test_an_added_module_is_graded_on_its_loaded_test() -> None:
    task = SHAPES["django"]
    probe = _invocation("probe", "django")
    graded = graded_task(task, probe)
    assert graded.fail_to_pass == (
        "test_hackaudit_probe_loaded (test_hackaudit_probe.HackauditProbe"
        ".test_hackaudit_probe_loaded)",
    )
    assert graded.pass_to_pass == ()
    assert graded_task(task, Grade()) is task
    assert graded_task(task, Suite()) is task


def test_an_added_module_joins_the_test_patch_as_a_new_file() -> None:
    task = SHAPES["pytest"]
    probe = Probe(files={PROBE: "a = 1\nb = 2"}, test=PROBE, loaded="C.t")
    assert run_test_patch(task, probe, None) == task.test_patch + (
        f"diff --git a/{PROBE} b/{PROBE}\nnew file mode 100644\n--- /dev/null\n+++ b/{PROBE}\n"
        "@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n\\ No newline at end of file\n"
    )
    assert run_test_patch(task, Suite(), None) == task.test_patch
    assert run_test_patch(task, Grade(), "other") == "other"


# --- the wider suite's command, before the test patch's files are added -------------------

SUITE_TASK = _task(test_patch=_diff("tests/test_core.py", "tests/test_new.py"))


@pytest.mark.parametrize(
    ("command", "dirs", "expected"),
    [
        ("pytest -rA tests/test_core.py::test_x", ("tests",), "pytest -rA tests"),
        (
            "python -m pytest --tb=no -p no:cacheprovider tests/test_core.py -k 'x or y'",
            (),
            "python -m pytest -rA --tb=no -p no:cacheprovider",
        ),
        (
            "source env && pytest -rA tests/test_core.py",
            ("tests",),
            "source env && pytest -rA tests",
        ),
        (
            "./tests/runtests.py --verbosity 2 utils_tests",
            ("tests",),
            "./tests/runtests.py --verbosity 2 utils_tests",
        ),
        ("bin/test -C --verbose", ("tests",), "bin/test -C --verbose tests"),
        ("bin/test -C --verbose {tests} -x", (), "bin/test -C --verbose -x"),
        ("python -m unittest -v", ("tests",), "python -m unittest discover -v -s tests -t ."),
        ("python -m unittest -v", (), "python -m unittest discover -v -s . -t ."),
        (None, ("tests",), "pytest -rA tests"),
    ],
)
def test_the_wider_suite_widens_the_tasks_command(
    command: str | None, dirs: tuple[str, ...], expected: str
) -> None:
    task = SUITE_TASK.model_copy(update={"test_command": command})
    built = wider_suite.command(task, runner_kind(task), Suite(dirs=dirs))
    assert built is not None and built.command == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -rA tests/test_core.py::test_x", "pytest -rA tests/test_a.py tests/b/test_c.py"),
        ("bin/test -C --verbose", "bin/test -C --verbose tests/test_a.py tests/b/test_c.py"),
        (
            "tox --current-env -e py39 --",
            "tox --current-env -e py39 -- tests/test_a.py tests/b/test_c.py",
        ),
        ("python -m unittest -v", None),
        ("./tests/runtests.py --verbosity 2 utils_tests", None),
    ],
)
def test_the_wider_suite_on_some_test_files_only(command: str, expected: str | None) -> None:
    task = SUITE_TASK.model_copy(update={"test_command": command})
    files = ("tests/test_a.py", "tests/b/test_c.py")
    built = wider_suite.command(task, runner_kind(task), Suite(dirs=("tests",), files=files))
    assert (built.command if built else None) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "pytest -rA tests/test_core.py -k 'x or y'",
            "pytest -rA -k 'sympify or expr' tests",
        ),
        ("bin/test -C --verbose", "bin/test -C --verbose tests -k sympify expr"),
        ("tox --current-env -e py39 --", "tox --current-env -e py39 -- -k 'sympify or expr' tests"),
        ("python -m unittest -v", None),
        ("./tests/runtests.py --verbosity 2 utils_tests", None),
    ],
)
def test_the_wider_suite_narrowed_to_the_tests_named_after_some_words(
    command: str, expected: str | None
) -> None:
    task = SUITE_TASK.model_copy(update={"test_command": command})
    suite = Suite(dirs=("tests",), keywords=("sympify", "expr"))
    built = wider_suite.command(task, runner_kind(task), suite)
    assert (built.command if built else None) == expected


def test_a_wrapper_handing_its_arguments_to_pytest_runs_the_wider_suite_through_it() -> None:
    task = _task(
        repo="sphinx-doc/sphinx",
        test_patch=_diff("tests/test_util_rst.py"),
        test_command="tox --current-env -epy39 -v --",
        log_parser="pytest",
    )
    run = command_for(task, Suite(dirs=("tests",)), task.test_patch, JUNIT)
    assert (run.command, run.parser, run.junit_path) == (
        "tox --current-env -epy39 -v -- tests",
        "pytest",
        None,
    )


def test_a_suite_the_runner_cannot_widen_is_refused_before_any_container() -> None:
    task = _task(test_command="make test", log_parser="pytest", test_patch="")
    spec = prepare_run(
        task,
        Candidate.gold(task),
        run_id="r",
        timeout_s=10,
        options=RunOptions(),
        invocation=Suite(),
    )
    assert isinstance(spec, RunResult) and spec.status is RunStatus.INFRA_ERROR
    assert "no wider-suite command for the task's pytest runner" in spec.reason


# --- probes: the interpreter's unittest whatever the runner ---------------------------------

PROBE_RUN = 'PYTHONHASHSEED=0 "$(command -v python || command -v python3)" -m unittest -v test_hackaudit_probe'


@pytest.mark.parametrize(
    ("command", "parser", "repo", "expected"),
    [
        ("python -m pytest -rA -p no:cacheprovider", "pytest", "example/x", PROBE_RUN),
        ("cd sub && pytest -rA", None, "example/x", "cd sub && " + PROBE_RUN),
        ("python -m unittest -v", "unittest", "example/x", PROBE_RUN),
        ("./tests/runtests.py --verbosity 2", "django", "example/x", PROBE_RUN),
        (None, None, "django/django", PROBE_RUN),
        ("bin/test -C --verbose", "sympy", "example/x", PROBE_RUN),
        (None, None, "sympy/sympy", PROBE_RUN),
        (None, None, "example/x", PROBE_RUN),
        ("anything", "junit", "example/x", PROBE_RUN),
    ],
)
def test_a_probe_runs_the_interpreters_unittest_whatever_the_runner(
    command: str | None, parser: str | None, repo: str, expected: str
) -> None:
    task = _task(test_command=command, log_parser=parser, repo=repo, test_patch="")
    probe = _invocation("probe", "pytest")
    run = command_for(task, probe, run_test_patch(task, probe, None), JUNIT)
    assert (run.command, run.parser, run.junit_path) == (expected, "unittest", None)
    assert "pytest" not in expected.removeprefix("cd sub && ")


@pytest.mark.parametrize("kind", ["probe", "capture"])
def test_an_added_modules_results_are_not_checked_against_the_runners_summary(kind: str) -> None:
    """Its results are observations compared with gold's; a graded run's are checked."""
    task = SHAPES["unittest"]
    added = _invocation(kind, "pytest")
    run = command_for(task, added, run_test_patch(task, added, None), JUNIT)
    graded = command_for(task, Grade(), task.test_patch, JUNIT)
    assert (run.checks_summary, graded.checks_summary) == (False, True)


def test_sympys_runner_runs_given_test_functions_as_their_files_with_keywords() -> None:
    """A selection of sympy tests (`file::function`) runs their files with `-k`: sympy's
    `bin/test` runs the functions whose names hold one of the keywords."""
    suite = Suite(
        dirs=("sympy/core/tests",),
        files=(
            "sympy/core/tests/test_expr.py::test_eq",
            "sympy/core/tests/test_sympify.py::test_sympify2",
            "sympy/core/tests/test_expr.py::test_ne",
        ),
    )
    built = command_for(SHAPES["sympy"], suite, SHAPES["sympy"].test_patch, None)
    assert built.command == (
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
        " sympy/core/tests/test_expr.py sympy/core/tests/test_sympify.py"
        " -k test_eq test_sympify2 test_ne"
    )
    files = Suite(dirs=("sympy/core/tests",), files=("sympy/core/tests/test_expr.py",))
    plain = command_for(SHAPES["sympy"], files, SHAPES["sympy"].test_patch, None)
    assert " -k" not in plain.command
