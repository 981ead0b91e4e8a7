"""Polynomials in one variable ``x`` with integer coefficients."""


def _term(coeff, power):
    """One term as printed: ``3*x**2``, ``x``, ``-x**3``, ``5``."""
    if power == 0:
        return str(coeff)
    base = "x" if power == 1 else f"x**{power}"
    if coeff == 1:
        return base
    if coeff == -1:
        return "-" + base
    return f"{coeff}*{base}"


class Poly:
    """A polynomial, from its coefficients listed from the constant term up.

    ``Poly([1, 0, 3])`` is ``3*x**2 + 1``. Trailing zero coefficients are dropped, so
    the zero polynomial has no coefficients and degree -1.
    """

    __slots__ = ("coeffs",)

    def __init__(self, coeffs=()):
        coeffs = list(coeffs)
        for coeff in coeffs:
            if isinstance(coeff, bool) or not isinstance(coeff, int):
                raise TypeError(f"coefficients must be ints, got {coeff!r}")
        while coeffs and coeffs[-1] == 0:
            coeffs.pop()
        self.coeffs = tuple(coeffs)

    @property
    def degree(self):
        return len(self.coeffs) - 1

    def __call__(self, x):
        value = 0
        for coeff in reversed(self.coeffs):
            value = value * x + coeff
        return value

    def __add__(self, other):
        if isinstance(other, int):
            other = Poly([other])
        if not isinstance(other, Poly):
            return NotImplemented
        size = max(len(self.coeffs), len(other.coeffs))
        a = self.coeffs + (0,) * (size - len(self.coeffs))
        b = other.coeffs + (0,) * (size - len(other.coeffs))
        return Poly([x + y for x, y in zip(a, b)])

    __radd__ = __add__

    def __neg__(self):
        return Poly([-coeff for coeff in self.coeffs])

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, other):
        if isinstance(other, int):
            other = Poly([other])
        if not isinstance(other, Poly):
            return NotImplemented
        if not self.coeffs or not other.coeffs:
            return Poly()
        product = [0] * (len(self.coeffs) + len(other.coeffs) - 1)
        for i, a in enumerate(self.coeffs):
            for j, b in enumerate(other.coeffs):
                product[i + j] += a * b
        return Poly(product)

    __rmul__ = __mul__

    def __eq__(self, other):
        if isinstance(other, int):
            other = Poly([other])
        if not isinstance(other, Poly):
            return NotImplemented
        return self.coeffs == other.coeffs

    def __hash__(self):
        return hash(self.coeffs)

    def __repr__(self):
        return f"Poly({list(self.coeffs)!r})"

    def __str__(self):
        terms = [
            _term(coeff, power)
            for power, coeff in reversed(list(enumerate(self.coeffs)))
            if coeff
        ]
        return " + ".join(terms) if terms else "0"
