from urlnorm import parse_query, sort_query


def test_parse_query():
    assert parse_query("a=1&b=&c&&d=x=y") == [("a", "1"), ("b", ""), ("c", None), ("d", "x=y")]


def test_parse_empty():
    assert parse_query("") == []


def test_sort_query_is_stable():
    assert sort_query("b=2&a=1&b=1&c") == "a=1&b=2&b=1&c"


def test_sort_query_drops_empty_pieces():
    assert sort_query("z=1&&a=2&") == "a=2&z=1"
