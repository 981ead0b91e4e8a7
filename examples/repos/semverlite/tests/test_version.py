import pytest

from semverlite import InvalidVersion, Version, parse


class TestParse:
    def test_plain_release(self):
        v = parse("1.2.3")
        assert (v.major, v.minor, v.patch) == (1, 2, 3)
        assert v.prerelease == ()
        assert v.build == ()

    def test_leading_v_is_accepted(self):
        assert parse("v4.0.1") == Version(4, 0, 1)

    def test_surrounding_whitespace_is_ignored(self):
        assert parse("  0.9.0\n") == Version(0, 9, 0)

    def test_prerelease_and_build(self):
        v = parse("2.0.0-rc.1+linux.amd64")
        assert v.prerelease == ("rc", "1")
        assert v.build == ("linux", "amd64")
        assert v.is_prerelease

    def test_parse_returns_versions_unchanged(self):
        v = Version(1, 0, 0)
        assert parse(v) is v

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("", id="empty"),
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.03",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-rc..1",
            "1.2.3-01",
            "-1.2.3",
            pytest.param("1.2.3 beta", id="space-inside"),
        ],
    )
    def test_rejects_malformed(self, text):
        with pytest.raises(InvalidVersion):
            parse(text)

    def test_rejects_non_strings(self):
        with pytest.raises(TypeError):
            parse(1.2)

    def test_error_keeps_the_text(self):
        with pytest.raises(InvalidVersion) as info:
            parse("1.2.x")
        assert info.value.text == "1.2.x"
        assert "1.2.x" in str(info.value)

    def test_build_identifiers_may_have_leading_zeros(self):
        assert parse("1.0.0+007").build == ("007",)


class TestVersionObject:
    def test_str_round_trip(self):
        for text in ["0.0.0", "1.2.3", "1.2.3-alpha", "1.2.3-x.7.z+sha.5114f85", "10.20.30+b"]:
            assert str(parse(text)) == text

    def test_repr(self):
        assert repr(Version(1, 2, 3, "beta")) == "Version('1.2.3-beta')"

    def test_string_prerelease_is_split(self):
        assert Version(1, 0, 0, "rc.2").prerelease == ("rc", "2")

    @pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
    def test_rejects_bad_numbers(self, bad):
        with pytest.raises(InvalidVersion):
            Version(bad, 0, 0)

    def test_release_and_finalize(self):
        v = parse("3.1.4-pre+meta")
        assert v.release == (3, 1, 4)
        assert v.finalize() == Version(3, 1, 4)
        assert v.finalize().build == ()

    def test_replace(self):
        v = parse("1.2.3-rc.1")
        assert str(v.replace(patch=9)) == "1.2.9-rc.1"
        assert str(v.replace(prerelease=())) == "1.2.3"

    def test_replace_rejects_unknown_fields(self):
        with pytest.raises(TypeError, match="epoch"):
            Version(1).replace(epoch=2)


class TestOrdering:
    @pytest.mark.parametrize(
        ("low", "high"),
        [
            ("0.0.1", "0.0.2"),
            ("0.9.9", "0.10.0"),
            ("1.9.0", "1.10.0"),
            ("1.10.0", "2.0.0"),
            ("1.0.0-rc.1", "1.0.0"),
            ("1.0.0-alpha", "1.0.0-beta"),
            ("1.0.0", "1.0.1-alpha"),
        ],
    )
    def test_lower_sorts_first(self, low, high):
        assert parse(low) < parse(high)
        assert parse(high) > parse(low)
        assert parse(low) != parse(high)

    def test_build_metadata_is_ignored(self):
        assert parse("1.0.0+a") == parse("1.0.0+b")
        assert hash(parse("1.0.0+a")) == hash(parse("1.0.0"))

    def test_compares_with_strings(self):
        assert parse("1.2.3") == "1.2.3"
        assert parse("1.2.3") < "1.3.0"

    def test_compare_method(self):
        assert parse("1.0.0").compare("1.0.0") == 0
        assert parse("1.0.0").compare("2.0.0") == -1
        assert parse("2.0.0").compare("1.0.0") == 1

    def test_unrelated_types_are_not_equal(self):
        assert parse("1.0.0") != 1
        with pytest.raises(TypeError):
            parse("1.0.0") < 1  # noqa: B015

    def test_sorting(self):
        texts = ["1.0.0", "0.1.0", "1.0.0-rc.1", "0.1.0-alpha", "10.0.0", "2.0.0"]
        assert [str(v) for v in sorted(map(parse, texts))] == [
            "0.1.0-alpha",
            "0.1.0",
            "1.0.0-rc.1",
            "1.0.0",
            "2.0.0",
            "10.0.0",
        ]
