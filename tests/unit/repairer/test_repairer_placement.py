"""New tests land inside the test patch's own hunks, in the file's style, and the patch applies."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain.placement import FALLBACK_NAME, function_of_test_id, place
from hackaudit.repairer.domain.regression import Captured, Form, Style, render

from .conftest import example_task


def _class_methods(tree: ast.Module, cls: str) -> list[str]:
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return [n.name for n in node.body if isinstance(n, ast.FunctionDef)]


@pytest.mark.parametrize(
    ("test_id", "name"),
    [
        (
            "tests/test_table.py::TestRecords::test_to_records_gives_dicts",
            "test_to_records_gives_dicts",
        ),
        ("tests/test_a.py::test_b[1-2]", "test_b"),
        ("test_x (tests.test_parser.EmptyValueTests.test_x)", "test_x"),
        ("test_y (admin.tests.Cls)", "test_y"),
        ("test_sympify", "test_sympify"),
    ],
)
def test_function_names_from_every_runners_ids(test_id: str, name: str) -> None:
    assert function_of_test_id(test_id) == name


def test_pytest_class_method_goes_into_the_same_class(applied: Callable[[str, str], Path]) -> None:
    task = example_task("mdtable__mdtable-2")
    placement = place(task, tp.parse(task.test_patch))
    assert placement is not None
    assert placement.anchor.file == "tests/test_table.py"
    assert placement.style == Style(method=True, unittest=False)
    source = render(
        "test_new_one", "Table(['a'], [['1']]).to_records()",
        Captured(value_repr="[{'a': '1'}]", module="mdtable"), "Table", Form.REPR, placement.style,
    )  # fmt: skip
    patched = tp.emit(tp.insert(placement.patch, placement.anchor, source))
    root = applied("mdtable", patched)
    tree = ast.parse((root / "tests/test_table.py").read_text())
    methods = _class_methods(tree, "TestRecords")
    assert methods[-2:] == ["test_to_records_gives_dicts", "test_new_one"]
    text = (root / "tests/test_table.py").read_text()
    assert "        from mdtable import Table\n" in text
    assert "        assert repr(Table(['a'], [['1']]).to_records()) == \"[{'a': '1'}]\"\n" in text


def test_unittest_method_uses_assert_equal_in_the_testcase(
    applied: Callable[[str, str], Path],
) -> None:
    task = example_task("inikit__inikit-2")
    placement = place(task, tp.parse(task.test_patch))
    assert placement is not None and placement.style == Style(method=True, unittest=True)
    source = render(
        "test_new_one", "inikit.loads('[s]\\nempty =\\n').get('s', 'empty')",
        Captured(value_repr="''", value_str=""), "", Form.REPR, placement.style,
    )  # fmt: skip
    root = applied("inikit", tp.emit(tp.insert(placement.patch, placement.anchor, source)))
    tree = ast.parse((root / "tests/test_parser.py").read_text())
    assert "test_new_one" in _class_methods(tree, "EmptyValueTests")
    assert "self.assertEqual(repr(inikit.loads(" in (root / "tests/test_parser.py").read_text()


def test_two_insertions_shift_the_later_hunks_and_still_apply(
    applied: Callable[[str, str], Path],
) -> None:
    task = example_task("mdtable__mdtable-2")
    patch = tp.parse(task.test_patch)
    for name in ("test_first", "test_second"):
        placement = place(task, patch)
        assert placement is not None
        patch = tp.insert(
            placement.patch, placement.anchor, f"def {name}(self):\n    assert True\n"
        )
    root = applied("mdtable", tp.emit(patch))
    methods = _class_methods(ast.parse((root / "tests/test_table.py").read_text()), "TestRecords")
    assert {"test_first", "test_second", "test_to_records_gives_dicts"} <= set(methods)


def test_module_level_function_in_a_new_test_file() -> None:
    patch = tp.parse(
        tp.new_file(
            "pkg/tests/test_core.py", "from pkg import f\n\n\ndef test_f():\n    assert f(1) == 2\n"
        )
    )
    anchor = tp.anchors(patch, ("test_f",))[0]
    assert (anchor.method, anchor.unittest, anchor.indent) == (False, False, "")
    text = tp.emit(tp.insert(patch, anchor, "def test_g():\n    assert f(2) == 3\n"))
    body = "".join(
        ln[1:] + "\n" for ln in text.splitlines() if ln.startswith("+") and not ln.startswith("+++")
    )
    tree = ast.parse(body)
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["test_f", "test_g"]
    assert "@@ -0,0 +1,9 @@" in text


def test_without_a_safe_place_a_test_file_is_added_beside() -> None:
    task = example_task("inikit__inikit-2").model_copy(
        update={
            "test_patch": "diff --git a/tests/data.txt b/tests/data.txt\n--- a/tests/data.txt\n"
            "+++ b/tests/data.txt\n@@ -1 +1 @@\n-a\n+b\n"
        }
    )
    placement = place(task, tp.parse(task.test_patch))
    assert placement is not None
    assert placement.anchor.file == f"tests/{FALLBACK_NAME}"
    assert placement.style == Style(method=True, unittest=True)  # a unittest task: a TestCase


def test_a_hunk_that_ends_inside_a_function_is_no_place() -> None:
    text = (
        "diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,4 @@\n"
        " def test_a():\n+    x = 1\n     y = 2\n     z = 3\n"
    )
    assert tp.anchors(tp.parse(text), ("test_a",)) == []
