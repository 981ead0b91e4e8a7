"""The normalisation pipeline."""

from urlnorm.paths import remove_dot_segments
from urlnorm.percent import normalize_percent
from urlnorm.query import sort_query
from urlnorm.split import URLParts, split_url, unsplit


def normalize(url, *, sort_query_params=False, drop_fragment=False):
    """A canonical spelling of ``url``.

    Scheme and host are lower-cased, an empty port (``host:``) is removed, dot segments
    are removed from the path, an empty path under an authority becomes ``/`` and percent
    escapes are normalised in every component. ``sort_query_params`` sorts the query by
    name; ``drop_fragment`` removes the ``#fragment``.
    """
    parts = split_url(url.strip())
    scheme = parts.scheme.lower() if parts.scheme is not None else None
    host = normalize_percent(parts.host.lower()) if parts.host is not None else None
    port = parts.port or None
    path = remove_dot_segments(normalize_percent(parts.path))
    if host is not None and not path:
        path = "/"
    query = parts.query
    if query is not None:
        query = normalize_percent(query)
        if sort_query_params:
            query = sort_query(query)
    fragment = None if drop_fragment else parts.fragment
    if fragment is not None:
        fragment = normalize_percent(fragment)
    userinfo = normalize_percent(parts.userinfo) if parts.userinfo is not None else None
    return unsplit(URLParts(scheme, userinfo, host, port, path, query, fragment))


def urls_equivalent(left, right, **options):
    """True if the two URLs normalise to the same text."""
    return normalize(left, **options) == normalize(right, **options)
