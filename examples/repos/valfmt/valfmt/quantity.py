"""A number with a unit of measure."""


class Quantity:
    """``magnitude`` (any number) in ``unit`` (a string such as ``"kg"``)."""

    __slots__ = ("magnitude", "unit")

    def __init__(self, magnitude, unit):
        if not isinstance(unit, str) or not unit:
            raise ValueError("unit must be a non-empty string")
        self.magnitude = magnitude
        self.unit = unit

    def __repr__(self):
        return "Quantity(%r, %r)" % (self.magnitude, self.unit)

    def __eq__(self, other):
        if not isinstance(other, Quantity):
            return NotImplemented
        return (self.magnitude, self.unit) == (other.magnitude, other.unit)

    def __hash__(self):
        return hash((self.magnitude, self.unit))
