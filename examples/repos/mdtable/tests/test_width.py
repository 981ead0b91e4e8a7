import pytest

from mdtable import display_width, pad


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("", 0),
        ("abc", 3),
        ("\u65e5\u672c", 4),
        ("e\u0301", 1),
        ("\uff21", 2),
        ("a\u200bb", 2),
    ],
)
def test_display_width(text, width):
    assert display_width(text) == width


class TestPad:
    def test_left(self):
        assert pad("ab", 5) == "ab   "

    def test_right(self):
        assert pad("ab", 5, "right") == "   ab"

    def test_center_puts_extra_space_right(self):
        assert pad("ab", 5, "center") == " ab  "

    def test_wide_characters(self):
        assert pad("\u65e5", 4) == "\u65e5  "

    def test_never_truncates(self):
        assert pad("abcdef", 3) == "abcdef"
