import pytest

from spanlib import DateInterval, format_interval


@pytest.mark.parametrize(
    ("start", "end", "style", "expected"),
    [
        ("2024-03-01", "2024-03-08", "iso", "2024-03-01/2024-03-08"),
        ("2024-03-01", "2024-03-08", "closed", "2024-03-01..2024-03-07"),
        ("2024-03-01", "2024-03-08", "human", "1-7 Mar 2024"),
        ("2024-02-28", "2024-03-04", "human", "28 Feb - 3 Mar 2024"),
        ("2024-12-30", "2025-01-03", "human", "30 Dec 2024 - 2 Jan 2025"),
        ("2024-07-04", "2024-07-05", "human", "4 Jul 2024"),
    ],
    ids=["iso", "closed", "human-one-month", "human-two-months", "human-two-years", "human-one-day"],
)
def test_styles(start, end, style, expected):
    assert format_interval(DateInterval(start, end), style) == expected


def test_empty():
    assert format_interval(DateInterval("2024-01-01", "2024-01-01"), "human") == "(empty)"


def test_unknown_style():
    with pytest.raises(ValueError, match="unknown style"):
        format_interval(DateInterval("2024-01-01", "2024-01-02"), "fancy")
