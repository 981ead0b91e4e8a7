from slugkit import truncate


def test_short_slug_is_unchanged():
    assert truncate("hello-world", 20) == "hello-world"


def test_slug_of_exactly_the_limit_is_unchanged():
    assert truncate("hello-world", 11) == "hello-world"
