"""The functions a hunk of a test patch shows: where each ends, whether the hunk shows its end."""

from __future__ import annotations

from hackaudit.repairer.domain import test_patch as tp

PATCH = "\n".join(
    [
        "diff --git a/tests/test_m.py b/tests/test_m.py",
        "--- a/tests/test_m.py",
        "+++ b/tests/test_m.py",
        "@@ -1,6 +1,9 @@",
        " class TestM:",
        "     def test_a(self):",
        "         assert f(1) == 1",
        "+",
        "+    async def test_b(self):",
        "+        assert f(2) == 2",
        " ",
        " def test_c():",
        "     assert f(3) == 3",
        "",
    ]
)


def test_shown_functions_end_at_the_next_line_at_their_level() -> None:
    (hunk,) = tp.parse(PATCH).files[0].hunks
    shown = list(tp.shown_functions(hunk))
    assert [(f.name, f.closed) for f in shown] == [
        ("test_a", True),
        ("test_b", True),
        ("test_c", False),
    ]
    assert shown[0].source() == "def test_a(self):\n    assert f(1) == 1\n"
    assert shown[1].lines == ("    async def test_b(self):", "        assert f(2) == 2", "")
    assert shown[2].source() == "def test_c():\n    assert f(3) == 3"
