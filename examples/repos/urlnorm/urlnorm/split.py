"""Splitting a URL into its components and joining them again."""

import re
from typing import NamedTuple, Optional

_URL = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*):)?"
    r"(?://(?P<authority>[^/?#]*))?"
    r"(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?"
    r"(?:#(?P<fragment>.*))?$",
    re.DOTALL,
)


class URLParts(NamedTuple):
    """Components of a URL. None means the component is absent, "" that it is empty."""

    scheme: Optional[str]
    userinfo: Optional[str]
    host: Optional[str]
    port: Optional[str]
    path: str
    query: Optional[str]
    fragment: Optional[str]

    @property
    def has_authority(self):
        return self.host is not None


def _split_authority(authority):
    userinfo, at, hostport = authority.rpartition("@")
    userinfo = userinfo if at else None
    if hostport.startswith("["):
        end = hostport.find("]")
        if end == -1:
            raise ValueError(f"unclosed IPv6 address in {authority!r}")
        host, rest = hostport[: end + 1], hostport[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(f"unexpected text after IPv6 address in {authority!r}")
        port = rest[1:] if rest else None
    else:
        host, colon, port = hostport.partition(":")
        port = port if colon else None
    if port is not None and port and not port.isdigit():
        raise ValueError(f"port {port!r} is not a number")
    return userinfo, host, port


def split_url(url):
    """Split ``url``; raises ValueError for a malformed authority."""
    match = _URL.match(url)
    if match is None:  # pragma: no cover - the pattern matches every string
        raise ValueError(f"cannot split {url!r}")
    authority = match.group("authority")
    if authority is None:
        userinfo = host = port = None
    else:
        userinfo, host, port = _split_authority(authority)
    return URLParts(
        match.group("scheme"),
        userinfo,
        host,
        port,
        match.group("path"),
        match.group("query"),
        match.group("fragment"),
    )


def unsplit(parts):
    """The URL text for ``parts``; the inverse of split_url."""
    text = ""
    if parts.scheme is not None:
        text += parts.scheme + ":"
    if parts.host is not None:
        text += "//"
        if parts.userinfo is not None:
            text += parts.userinfo + "@"
        text += parts.host
        if parts.port is not None:
            text += ":" + parts.port
    text += parts.path
    if parts.query is not None:
        text += "?" + parts.query
    if parts.fragment is not None:
        text += "#" + parts.fragment
    return text
