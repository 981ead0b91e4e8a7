from datetime import date

import pytest

from spanlib import DateInterval, Duration, InvalidInterval, parse_duration, parse_interval


class TestParseDuration:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("P10D", Duration(days=10)),
            ("P2W", Duration(weeks=2)),
            ("P1Y", Duration(years=1)),
            ("P3M", Duration(months=3)),
            ("P1Y2M3D", Duration(1, 2, 0, 3)),
            ("p5d", Duration(days=5)),
        ],
    )
    def test_valid(self, text, expected):
        assert parse_duration(text) == expected

    @pytest.mark.parametrize("text", ["P", "10D", "P1W2D", "PT5H", "P-1D", "P1.5D", pytest.param("", id="empty")])
    def test_invalid(self, text):
        with pytest.raises(InvalidInterval):
            parse_duration(text)

    @pytest.mark.parametrize("text", ["P10D", "P2W", "P1Y2M", "P0D"])
    def test_str_round_trip(self, text):
        assert str(parse_duration(text)) == text


class TestParseInterval:
    def test_start_and_end(self):
        assert parse_interval("2024-01-01/2024-02-01") == DateInterval("2024-01-01", "2024-02-01")

    def test_start_and_days(self):
        assert parse_interval("2024-02-25/P10D") == DateInterval("2024-02-25", "2024-03-06")

    def test_start_and_weeks(self):
        assert parse_interval("2024-12-30/P1W") == DateInterval("2024-12-30", "2025-01-06")

    def test_duration_and_end(self):
        assert parse_interval("P3D/2024-03-01") == DateInterval("2024-02-27", "2024-03-01")

    def test_surrounding_space(self):
        assert parse_interval(" 2024-01-01/P1D\n").days == 1

    @pytest.mark.parametrize(
        "text",
        ["2024-01-01", "2024-01-01/", "/2024-01-01", "P1D/P2D", "2024-01-01/2024-01-02/x"],
    )
    def test_malformed(self, text):
        with pytest.raises(InvalidInterval):
            parse_interval(text)

    def test_end_before_start(self):
        with pytest.raises(InvalidInterval):
            parse_interval("2024-02-01/2024-01-01")

    def test_returns_dates(self):
        iv = parse_interval("2024-01-01/P1D")
        assert type(iv.start) is date
