from slugkit import Redirects, SlugRegistry


class TestRedirects:
    def test_unknown_slug_resolves_to_itself(self):
        assert Redirects().resolve("page") == "page"

    def test_add_and_resolve(self):
        redirects = Redirects()
        redirects.add("old", "new")
        assert redirects.resolve("old") == "new"
        assert "old" in redirects and "new" not in redirects

    def test_chains_are_collapsed(self):
        redirects = Redirects()
        redirects.add("a", "b")
        redirects.add("b", "c")
        assert redirects.resolve("a") == "c"
        assert redirects.resolve("b") == "c"
        assert len(redirects) == 2

    def test_a_target_that_was_redirected_is_live_again(self):
        redirects = Redirects()
        redirects.add("a", "b")
        redirects.add("b", "a")
        assert redirects.resolve("b") == "a"
        assert redirects.resolve("a") == "a"
        assert len(redirects) == 1


class TestClaim:
    def test_claim_marks_the_slug_used(self):
        store = set()
        registry = SlugRegistry(store, Redirects())
        assert registry.claim("Hello World") == "hello-world"
        assert store == {"hello-world"}

    def test_claim_numbers_a_taken_slug(self):
        registry = SlugRegistry({"hello-world"}, Redirects())
        assert registry.claim("Hello, World!") == "hello-world-2"

    def test_settings_are_passed_on(self):
        registry = SlugRegistry(set(), Redirects(), separator="_", max_length=11)
        assert registry.claim("Hello World Again") == "hello_world"

    def test_release(self):
        store = {"a", "b"}
        SlugRegistry(store, Redirects()).release("a")
        assert store == {"b"}
