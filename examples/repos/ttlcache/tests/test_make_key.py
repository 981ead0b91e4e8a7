import pytest

from ttlcache import make_key


def test_equal_calls_equal_keys():
    assert make_key((1, "a"), {}) == make_key((1, "a"), {})
    assert hash(make_key((1, "a"), {})) == hash(make_key((1, "a"), {}))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (((1,), {}), ((2,), {})),
        (((1, 2), {}), ((2, 1), {})),
        (((1,), {}), ((1, 1), {})),
    ],
)
def test_different_calls_different_keys(left, right):
    assert make_key(*left) != make_key(*right)


def test_typed_separates_equal_values_of_other_types():
    assert make_key((1,), {}) == make_key((1.0,), {})
    assert make_key((1,), {}, typed=True) != make_key((1.0,), {}, typed=True)


def test_keys_are_hashable():
    key = make_key((1, ("nested",)), {"flag": True})
    assert {key: "ok"}[key] == "ok"
