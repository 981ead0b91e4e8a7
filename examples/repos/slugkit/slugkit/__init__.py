"""slugkit: URL slugs from titles."""

from slugkit.fold import fold
from slugkit.registry import Redirects, SlugRegistry
from slugkit.slugify import slugify
from slugkit.truncate import truncate
from slugkit.unique import unique_slug

__all__ = ["Redirects", "SlugRegistry", "fold", "slugify", "truncate", "unique_slug"]

__version__ = "0.4.0"
