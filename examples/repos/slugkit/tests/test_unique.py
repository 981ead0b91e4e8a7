from slugkit import unique_slug


def test_free_slug_is_kept():
    assert unique_slug("post", set()) == "post"


def test_taken_slug_gets_a_number():
    assert unique_slug("post", {"post"}) == "post-2"


def test_numbers_count_up():
    assert unique_slug("post", {"post", "post-2", "post-3"}) == "post-4"


def test_custom_separator():
    assert unique_slug("post", {"post"}, separator="_") == "post_2"


def test_any_container_of_slugs():
    class Lookup:
        def __contains__(self, slug):
            return slug in ("post", "post-2")

    assert unique_slug("post", Lookup()) == "post-3"


def test_max_length_cuts_a_free_slug():
    assert unique_slug("a-long-title", set(), max_length=7) == "a-long"
