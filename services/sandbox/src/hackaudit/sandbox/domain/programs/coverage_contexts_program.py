"""Names the lines each test function executes after that test, under every runner: a coverage.py
plugin (a dynamic context switcher) that a coverage run's rcfile loads in every measured process.

coverage.py's own `dynamic_context = test_function` starts a context at the first function
named `test*` that is called while none is active, and keeps it until that function returns.
Under sympy's `bin/test` that function is the runner's own method `SymPyTests.test`, which runs
every test file: all lines then fall under that one name and no test function is ever told
apart. This switcher starts a context only in a function defined in a test file
(`test*.py`, `*_test.py`, `*_tests.py`, `tests.py`), so the runner's frames are passed over and
the test functions themselves name their lines. Names are formed as coverage.py forms them
(`module.function`, `module.Class.method`); a test module run without a module name of its
own (sympy's runner executes each test file's text in a dictionary holding only `__file__`) is
named after its path in the repository (`pkg/tests/test_x.py` -> `pkg.tests.test_x`).

It runs inside the tests' processes under the image's own interpreter, so it is written for any
Python 3 from 3.6: no f-strings, no variable annotations, nothing but the standard library and
coverage.py.
"""

import os

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 (named in type comments)

REPOSITORY = "/testbed"
_NAMELESS = ("", "__main__", "builtins")


def is_test_file(path):
    # type: (str) -> bool
    name = os.path.basename(path)
    if not name.endswith(".py"):
        return False
    stem = name[:-3]
    return (
        stem.startswith("test")
        or stem.endswith("_test")
        or stem.endswith("_tests")
        or stem == "tests"
    )


def module_of_path(path):
    # type: (str) -> str
    """The dotted module name of a file of the repository, from its path."""
    path = os.path.abspath(path)
    prefix = REPOSITORY + os.sep
    if path.startswith(prefix):
        path = path[len(prefix) :]
    if path.endswith(".py"):
        path = path[:-3]
    return path.strip(os.sep).replace(os.sep, ".")


def _module(frame, found):
    # type: (object, object) -> str
    module = getattr(found, "__module__", None)
    if not isinstance(module, str) or module in _NAMELESS:
        module = frame.f_globals.get("__name__")  # type: ignore[attr-defined]
    if not isinstance(module, str) or module in _NAMELESS:
        globals_ = frame.f_globals  # type: ignore[attr-defined]
        module = module_of_path(globals_.get("__file__") or frame.f_code.co_filename)  # type: ignore[attr-defined]
    return module


def test_context(frame):
    # type: (object) -> object
    """The context a call of `frame` starts: its test's name, or None (not a test function)."""
    code = frame.f_code  # type: ignore[attr-defined]
    name = code.co_name
    if not (name.startswith("test") or name == "runTest"):
        return None
    if not is_test_file(code.co_filename):
        return None
    method = None
    instance = None
    if code.co_argcount and code.co_varnames[0] == "self":
        instance = frame.f_locals.get("self")  # type: ignore[attr-defined]
        method = getattr(instance, name, None)
    if method is None:
        function = frame.f_globals.get(name)  # type: ignore[attr-defined]
        if function is None:
            return None
        return _module(frame, function) + "." + name
    function = getattr(method, "__func__", None)
    if function is None:
        cls = instance.__class__
        return _module(frame, cls) + "." + cls.__name__ + "." + name
    return _module(frame, function) + "." + function.__qualname__


def _switch(frame):
    # type: (object) -> object
    try:
        return test_context(frame)
    except Exception:  # never stop the tests
        return None


def coverage_init(reg, options):
    # type: (Any, Any) -> None
    """coverage.py's entry point of a plugin: registers the switcher, which coverage.py calls
    for each call made while no context is active."""
    import coverage  # type: ignore[import-not-found]  # the run's own, in the container

    class TestContexts(coverage.CoveragePlugin):  # type: ignore[misc]
        def dynamic_context(self, frame):
            # type: (Any) -> object
            return _switch(frame)

    reg.add_dynamic_context(TestContexts())
