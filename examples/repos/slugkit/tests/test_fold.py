import pytest

from slugkit import fold


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("café", "cafe"),
        ("Crème Brûlée", "Creme Brulee"),
        ("Straße", "Strasse"),
        ("Æsir and Œuvre", "AEsir and OEuvre"),
        ("Łódź", "Lodz"),
        ("ﬁle", "file"),
        ("日本", ""),
    ],
)
def test_fold(text, expected):
    assert fold(text) == expected


def test_fold_keeps_punctuation_and_digits():
    assert fold("a.b, 1-2!") == "a.b, 1-2!"
