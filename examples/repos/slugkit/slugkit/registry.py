"""The slugs a site has handed out, and the redirects left by renamed pages."""

from slugkit.slugify import slugify
from slugkit.unique import unique_slug


class Redirects:
    """Old slugs and the slug each now leads to, without chains.

    Adding ``b -> c`` when ``a -> b`` exists makes ``a`` lead to ``c`` directly, and a
    slug that becomes a page's slug again stops being redirected.
    """

    def __init__(self):
        self._targets = {}

    def add(self, old, new):
        """Send ``old`` to ``new``, and everything that led to ``old`` to ``new`` too."""
        for source, target in self._targets.items():
            if target == old:
                self._targets[source] = new
        self._targets.pop(new, None)
        self._targets[old] = new

    def resolve(self, slug):
        """The slug ``slug`` leads to: its redirect target, or ``slug`` itself."""
        return self._targets.get(slug, slug)

    def __contains__(self, slug):
        return slug in self._targets

    def __len__(self):
        return len(self._targets)


class SlugRegistry:
    """Hands out unique slugs for page titles.

    ``store`` holds the slugs in use (``in``, ``add``, ``discard``: a set will do, or a
    table); ``redirects`` records renamed pages (``add(old, new)``, like ``Redirects``).
    """

    def __init__(self, store, redirects, separator="-", max_length=None):
        self.store = store
        self.redirects = redirects
        self.separator = separator
        self.max_length = max_length

    def claim(self, title):
        """A new slug for ``title``, numbered if taken, now in use."""
        slug = slugify(title, self.separator, max_length=self.max_length)
        slug = unique_slug(slug, self.store, self.separator, self.max_length)
        self.store.add(slug)
        return slug

    def release(self, slug):
        """``slug`` is no longer in use (its page was deleted)."""
        self.store.discard(slug)

    def rename(self, old, title):
        """Give the page at ``old`` a slug for its new ``title``; return the new slug."""
        new = self.claim(title)
        self.store.discard(old)
        return new
