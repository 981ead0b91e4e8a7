from decimal import Decimal
from fractions import Fraction

import pytest

from valfmt import Printer, Quantity, fmt


def test_none_and_bools():
    assert fmt(None) == "none"
    assert fmt(True) == "true"
    assert fmt(False) == "false"


def test_ints():
    assert fmt(0) == "0"
    assert fmt(-42) == "-42"


def test_floats():
    assert fmt(0.5) == "0.5"
    assert fmt(1e-7) == "1e-07"


def test_float_precision():
    assert fmt(3.14159, precision=2) == "3.14"
    assert fmt(2.0, precision=0) == "2"
    assert Printer(precision=3).doprint(-0.5) == "-0.500"


def test_fractions():
    assert fmt(Fraction(1, 3)) == "1/3"
    assert fmt(Fraction(-7, 2)) == "-7/2"
    assert fmt(Fraction(4, 2)) == "2"


def test_complex():
    assert fmt(1 + 2j) == "(1.0+2.0j)"
    assert fmt(complex(0.5, -1.25)) == "(0.5-1.25j)"


def test_quantities():
    assert fmt(Quantity(2, "m")) == "2 m"
    assert fmt(Quantity(0.5, "kg")) == "0.5 kg"
    assert fmt([Quantity(1.25, "s")]) == "[1.25 s]"


def test_decimals():
    assert fmt(Decimal("1.50")) == "1.50"
    assert fmt(Decimal("-0.001")) == "-0.001"
    assert fmt(Decimal("NaN")) == "nan"


def test_strings():
    assert fmt("a'b") == '"a\'b"'
    assert fmt("") == "''"


def test_containers():
    assert fmt([1, 2.5, "x"]) == "[1, 2.5, 'x']"
    assert fmt((1,)) == "(1,)"
    assert fmt((1, None)) == "(1, none)"
    assert fmt({"a": [True]}) == "{'a': [true]}"
    assert fmt(set()) == "set()"
    assert fmt({2, 1}) == "{1, 2}"


def test_nested_containers_use_the_same_printer():
    assert fmt([0.25, (3,)], precision=1) == "[0.2, (3,)]"


def test_unknown_types_fall_back_to_repr():
    assert fmt(range(3)) == "range(0, 3)"


def test_settings_are_checked():
    with pytest.raises(ValueError):
        Printer(precision=-1)
    with pytest.raises(ValueError):
        Printer(precision=1.5)
    with pytest.raises(TypeError):
        Printer(sep=None)
