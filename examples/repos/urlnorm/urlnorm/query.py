"""Query strings as ordered (name, value) pairs."""


def parse_query(query):
    """``a=1&b=&c`` -> [("a", "1"), ("b", ""), ("c", None)]; empty pieces are skipped."""
    pairs = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, eq, value = piece.partition("=")
        pairs.append((name, value if eq else None))
    return pairs


def format_query(pairs):
    return "&".join(name if value is None else f"{name}={value}" for name, value in pairs)


def sort_query(query):
    """The query with its pairs sorted by name; pairs with the same name keep their order."""
    return format_query(sorted(parse_query(query), key=lambda pair: pair[0]))
