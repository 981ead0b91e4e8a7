import pytest

from urlnorm import remove_dot_segments


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a/b/c", "/a/b/c"),
        ("/a/./b", "/a/b"),
        ("/a/b/../c", "/a/c"),
        ("/a/b/../../c", "/c"),
        ("/a//b", "/a//b"),
        ("a/./b/../c", "a/c"),
        ("", ""),
        ("/", "/"),
    ],
)
def test_remove_dot_segments(path, expected):
    assert remove_dot_segments(path) == expected


def test_dots_inside_names_are_kept():
    assert remove_dot_segments("/a/.hidden/..b/c..") == "/a/.hidden/..b/c.."
