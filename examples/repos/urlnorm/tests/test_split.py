import pytest

from urlnorm import URLParts, split_url, unsplit


def test_full_url():
    parts = split_url("https://user:pw@Example.com:8443/a/b?x=1&y=2#frag")
    assert parts == URLParts("https", "user:pw", "Example.com", "8443", "/a/b", "x=1&y=2", "frag")
    assert parts.has_authority


def test_absent_and_empty_components_differ():
    assert split_url("http://h/p").query is None
    assert split_url("http://h/p?").query == ""
    assert split_url("http://h/p").fragment is None
    assert split_url("http://h/p#").fragment == ""


def test_no_authority():
    parts = split_url("mailto:someone@example.org")
    assert parts.host is None
    assert parts.path == "someone@example.org"
    assert not parts.has_authority


def test_relative_reference():
    assert split_url("../up?q") == URLParts(None, None, None, None, "../up", "q", None)


def test_ipv6_host():
    parts = split_url("http://[::1]:8080/")
    assert (parts.host, parts.port) == ("[::1]", "8080")
    assert split_url("http://[fe80::2]/").port is None


def test_empty_port():
    assert split_url("http://host:/").port == ""


@pytest.mark.parametrize("url", ["http://h:80x/", "http://[::1/", "http://[::1]x/"])
def test_malformed_authority(url):
    with pytest.raises(ValueError):
        split_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://user@h.example:1/p?q#f",
        "file:///etc/hosts",
        "mailto:a@b",
        "//cdn.example/x.js",
        "rel/path?x",
        "http://h?#",
    ],
)
def test_round_trip(url):
    assert unsplit(split_url(url)) == url
