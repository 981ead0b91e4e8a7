import pytest

from semverlite import Comparator, InvalidRange, Range, max_satisfying, satisfies


@pytest.mark.parametrize(
    ("version", "expression", "expected"),
    [
        ("1.2.3", "1.2.3", True),
        ("1.2.3", "=1.2.3", True),
        ("1.2.4", "==1.2.3", False),
        ("1.2.4", "!=1.2.3", True),
        ("1.2.3", ">1.2.3", False),
        ("1.2.3", ">=1.2.3", True),
        ("1.2.2", "<1.2.3", True),
        ("1.2.3", "<=1.2.3", True),
        ("1.5.0", ">=1.2.0 <2.0.0", True),
        ("2.0.0", ">=1.2.0 <2.0.0", False),
        ("1.5.0", ">=1.2.0, <2.0.0", True),
        ("1.5.0", ">= 1.2.0, < 2.0.0", True),
        ("3.1.0", "<2.0.0 || >=3.0.0", True),
        ("2.5.0", "<2.0.0 || >=3.0.0", False),
        ("0.0.1", "*", True),
    ],
    ids=lambda value: value.replace(" ", "") if isinstance(value, str) else None,
)
def test_satisfies(version, expression, expected):
    assert satisfies(version, expression) is expected


class TestCaret:
    @pytest.mark.parametrize("version", ["1.2.3", "1.2.4", "1.9.0", "1.99.99"])
    def test_allows_compatible(self, version):
        assert satisfies(version, "^1.2.3")

    @pytest.mark.parametrize("version", ["1.2.2", "2.0.0", "0.9.0", "3.0.0"])
    def test_rejects_incompatible(self, version):
        assert not satisfies(version, "^1.2.3")

    def test_expansion(self):
        assert str(Range("^2.1.0")) == ">=2.1.0 <3.0.0"


class TestTilde:
    @pytest.mark.parametrize(
        ("version", "expected"),
        [("1.2.3", True), ("1.2.9", True), ("1.3.0", False), ("1.2.2", False)],
    )
    def test_patch_level(self, version, expected):
        assert satisfies(version, "~1.2.3") is expected

    def test_expansion(self):
        assert str(Range("~0.4.2")) == ">=0.4.2 <0.5.0"


class TestPrereleases:
    def test_excluded_by_default(self):
        assert not satisfies("1.3.0-beta", ">=1.2.0")

    def test_included_on_request(self):
        assert satisfies("1.3.0-beta", ">=1.2.0", include_prerelease=True)

    def test_allowed_when_range_names_same_release(self):
        assert satisfies("1.3.0-beta", ">=1.3.0-alpha")
        assert not satisfies("1.4.0-beta", ">=1.3.0-alpha")


class TestErrors:
    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("", id="empty"),
            ">=",
            ">=1.2",
            "^x.y.z",
            pytest.param("1.0.0 ||", id="dangling-or"),
            "=>1.0.0",
        ],
    )
    def test_invalid(self, text):
        with pytest.raises(InvalidRange):
            Range(text)

    def test_non_string(self):
        with pytest.raises(TypeError):
            Range(None)

    def test_unknown_operator(self):
        with pytest.raises(InvalidRange):
            Comparator("~>", "1.0.0")


def test_contains():
    assert "1.4.0" in Range(">=1.0.0 <2.0.0")


def test_max_satisfying():
    versions = ["1.0.0", "1.4.2", "1.10.0", "2.0.0", "1.11.0-rc.1"]
    assert str(max_satisfying(versions, "^1.0.0")) == "1.10.0"
    assert max_satisfying(versions, ">=3.0.0") is None


def test_comparator_equality():
    assert Comparator(">=", "1.0.0") == Comparator(">=", "1.0.0+build")
    assert len({Comparator("<", "2.0.0"), Comparator("<", "2.0.0")}) == 1
