"""The printer: one ``_format_<TypeName>`` method per type, chosen by the value's MRO."""

from decimal import Decimal
from fractions import Fraction


class Printer:
    """Turns values into text.

    ``precision``: digits after the decimal point for numbers that are not whole
    (None: as exact as the type allows). ``sep``: what goes between the items of a
    list, tuple or dict.
    """

    def __init__(self, precision=None, sep=", "):
        if precision is not None and (not isinstance(precision, int) or precision < 0):
            raise ValueError("precision must be a non-negative int or None")
        if not isinstance(sep, str):
            raise TypeError("sep must be a string")
        self.precision = precision
        self.sep = sep

    def doprint(self, value):
        for klass in type(value).__mro__:
            method = getattr(self, "_format_" + klass.__name__, None)
            if method is not None:
                return method(value)
        return repr(value)

    def _format_NoneType(self, value):
        return "none"

    def _format_bool(self, value):
        return "true" if value else "false"

    def _format_int(self, value):
        return str(value)

    def _format_Fraction(self, value):
        if value.denominator == 1:
            return str(value.numerator)
        return "%d/%d" % (value.numerator, value.denominator)

    def _format_float(self, value):
        if self.precision is None:
            return repr(value)
        return "%.*f" % (self.precision, value)

    def _format_str(self, value):
        return repr(value)

    def _format_complex(self, value):
        real = repr(value.real)
        imag = repr(abs(value.imag))
        sign = "-" if str(value.imag).startswith("-") else "+"
        return "(" + real + sign + imag + "j)"

    def _format_Quantity(self, value):
        return repr(value.magnitude) + " " + value.unit

    def _format_list(self, value):
        return "[" + ", ".join(self.doprint(item) for item in value) + "]"

    def _format_tuple(self, value):
        if len(value) == 1:
            return "(" + self.doprint(value[0]) + ",)"
        return "(" + ", ".join(self.doprint(item) for item in value) + ")"

    def _format_dict(self, value):
        items = [self.doprint(k) + ": " + self.doprint(v) for k, v in value.items()]
        return "{" + ", ".join(items) + "}"

    def _format_set(self, value):
        if not value:
            return "set()"
        return "{" + ", ".join(sorted(self.doprint(item) for item in value)) + "}"

    def _format_Decimal(self, value):
        if not value.is_finite():
            return str(value).lower()
        return str(value)


def fmt(value, **settings):
    """``value`` as text, printed by a ``Printer`` built with ``settings``."""
    return Printer(**settings).doprint(value)
