"""urlnorm: canonical spellings of URLs."""

from urlnorm.normalize import normalize, urls_equivalent
from urlnorm.paths import remove_dot_segments
from urlnorm.percent import normalize_percent
from urlnorm.query import parse_query, sort_query
from urlnorm.split import URLParts, split_url, unsplit

__all__ = [
    "URLParts",
    "normalize",
    "normalize_percent",
    "parse_query",
    "remove_dot_segments",
    "sort_query",
    "split_url",
    "unsplit",
    "urls_equivalent",
]

__version__ = "0.9.0"
