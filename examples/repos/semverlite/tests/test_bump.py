import pytest

from semverlite import Version, bump, parse


@pytest.mark.parametrize(
    ("start", "part", "expected"),
    [
        ("1.2.3", "major", "2.0.0"),
        ("1.2.3", "minor", "1.3.0"),
        ("1.2.3", "patch", "1.2.4"),
        ("0.0.0", "patch", "0.0.1"),
        ("1.2.3+build.5", "patch", "1.2.4"),
        ("2.0.0-rc.1", "major", "2.0.0"),
        ("2.1.0-rc.1", "major", "3.0.0"),
        ("1.3.0-beta", "minor", "1.3.0"),
        ("1.3.1-beta", "minor", "1.4.0"),
        ("1.3.1-beta", "patch", "1.3.1"),
    ],
)
def test_bump(start, part, expected):
    assert str(bump(start, part)) == expected


def test_accepts_version_objects():
    assert bump(Version(0, 1, 0), "minor") == parse("0.2.0")


def test_result_has_no_build_metadata():
    assert bump("1.0.0+abc", "major").build == ()


def test_unknown_part():
    with pytest.raises(ValueError, match="unknown part 'micro'"):
        bump("1.0.0", "micro")
