import pytest

from urlnorm import normalize_percent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%41%42%43", "ABC"),
        ("%7E%7e", "~~"),
        ("%2D%2E%5F", "-._"),
        ("%20", "%20"),
        ("%2F", "%2F"),
        pytest.param("a b", "a%20b", id="space"),
        ("caf\u00e9", "caf%C3%A9"),
        pytest.param("/path;p=1?x=[y]", "/path;p=1?x=[y]", id="reserved"),
        ("", ""),
    ],
)
def test_normalize_percent(text, expected):
    assert normalize_percent(text) == expected


def test_idempotent():
    once = normalize_percent("a b/%7E/caf\u00e9/%3A")
    assert normalize_percent(once) == once
