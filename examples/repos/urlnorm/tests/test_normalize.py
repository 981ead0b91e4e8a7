import pytest

from urlnorm import normalize, urls_equivalent


class TestLetterCase:
    def test_scheme_and_host_are_lowercased(self):
        assert normalize("HTTP://WWW.Example.COM/Path") == "http://www.example.com/Path"

    def test_userinfo_keeps_its_case(self):
        assert normalize("http://Alice@Example.com/") == "http://Alice@example.com/"


class TestPath:
    def test_empty_path_becomes_slash(self):
        assert normalize("http://example.com") == "http://example.com/"
        assert normalize("http://example.com?q=1") == "http://example.com/?q=1"

    def test_dot_segments(self):
        assert normalize("http://example.com/a/./b/../c") == "http://example.com/a/c"

    def test_path_without_authority_is_not_given_a_slash(self):
        assert normalize("mailto:ops@example.com") == "mailto:ops@example.com"


class TestPort:
    def test_empty_port_is_dropped(self):
        assert normalize("http://example.com:/x") == "http://example.com/x"

    def test_explicit_port_is_kept(self):
        assert normalize("http://example.com:8080/") == "http://example.com:8080/"


class TestPercent:
    def test_unreserved_escapes_are_decoded(self):
        assert normalize("http://example.com/%7Euser/%61") == "http://example.com/~user/a"

    def test_raw_spaces_are_encoded(self):
        assert normalize("http://example.com/a b?q=c d") == "http://example.com/a%20b?q=c%20d"

    def test_fragment(self):
        assert normalize("http://example.com/#sec%41") == "http://example.com/#secA"


class TestOptions:
    def test_sort_query(self):
        url = "http://example.com/?b=2&a=1"
        assert normalize(url) == url
        assert normalize(url, sort_query_params=True) == "http://example.com/?a=1&b=2"

    def test_drop_fragment(self):
        assert normalize("http://example.com/x#top", drop_fragment=True) == "http://example.com/x"

    def test_empty_query_is_kept(self):
        assert normalize("http://example.com/x?") == "http://example.com/x?"


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("HTTP://example.com", "http://EXAMPLE.com/"),
        ("http://example.com/%7Ea", "http://example.com/~a"),
        ("http://example.com/a/../b", "http://example.com/b"),
    ],
)
def test_equivalent(left, right):
    assert urls_equivalent(left, right)


def test_not_equivalent():
    assert not urls_equivalent("http://example.com/a", "http://example.com/A")


def test_whitespace_is_stripped():
    assert normalize("  http://example.com/\n") == "http://example.com/"
