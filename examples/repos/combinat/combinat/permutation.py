"""Permutations of ``0 .. n-1``, given in array form or in cyclic form."""

from math import lcm


def _is_index(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class Permutation:
    """A permutation of ``range(size)``.

    ``Permutation([2, 0, 1])`` is the array form: 0 goes to 2, 1 to 0, 2 to 1.
    ``Permutation([[0, 2], [1, 3]])`` is the cyclic form: 0 goes to 2 and back, 1 to 3
    and back; elements no cycle names stay where they are. ``size`` pads either form
    with fixed points.
    """

    __slots__ = ("_array",)

    def __init__(self, form=(), size=None):
        form = list(form)
        if form and all(isinstance(item, (list, tuple)) for item in form):
            array = self._from_cycles(form)
        else:
            array = self._from_array(form)
        if size is not None:
            if not _is_index(size):
                raise ValueError(f"size must be a non-negative int, got {size!r}")
            if size < len(array):
                raise ValueError(f"size {size} is smaller than the permutation ({len(array)})")
            array.extend(range(len(array), size))
        self._array = tuple(array)

    @staticmethod
    def _from_array(form):
        """Validate an array form and return it as a list."""
        for value in form:
            if not _is_index(value):
                raise ValueError(f"array form holds non-negative ints only, got {value!r}")
            if value >= len(form):
                raise ValueError(f"{value} is out of range for a permutation of {len(form)}")
        return list(form)

    @staticmethod
    def _from_cycles(cycles):
        """Build the array form of a product of disjoint cycles."""
        elements = [value for cycle in cycles for value in cycle]
        for value in elements:
            if not _is_index(value):
                raise ValueError(f"cycles hold non-negative ints only, got {value!r}")
        size = max(elements) + 1 if elements else 0
        array = list(range(size))
        for cycle in cycles:
            for position, value in enumerate(cycle):
                array[value] = cycle[(position + 1) % len(cycle)]
        return array

    @property
    def array_form(self):
        return list(self._array)

    @property
    def size(self):
        return len(self._array)

    @property
    def is_identity(self):
        return all(image == point for point, image in enumerate(self._array))

    def __call__(self, point):
        return self._array[point] if point < len(self._array) else point

    def __mul__(self, other):
        """``p * q`` applies ``p`` first, then ``q``."""
        if not isinstance(other, Permutation):
            return NotImplemented
        size = max(self.size, other.size)
        return Permutation([other(self(point)) for point in range(size)])

    def __pow__(self, exponent):
        result = Permutation(size=self.size)
        base = self if exponent >= 0 else ~self
        for _ in range(abs(exponent)):
            result = result * base
        return result

    def __invert__(self):
        inverse = [0] * self.size
        for point, image in enumerate(self._array):
            inverse[image] = point
        return Permutation(inverse)

    def cyclic_form(self):
        """The cycles of length two or more, each starting at its smallest element."""
        seen = set()
        cycles = []
        for start in range(self.size):
            if start in seen:
                continue
            cycle = [start]
            seen.add(start)
            point = self._array[start]
            while point != start:
                cycle.append(point)
                seen.add(point)
                point = self._array[point]
            if len(cycle) > 1:
                cycles.append(cycle)
        return cycles

    def order(self):
        """The smallest ``k > 0`` with ``p ** k`` the identity."""
        return lcm(1, *(len(cycle) for cycle in self.cyclic_form()))

    def __eq__(self, other):
        if not isinstance(other, Permutation):
            return NotImplemented
        size = max(self.size, other.size)
        return all(self(point) == other(point) for point in range(size))

    def __hash__(self):
        array = list(self._array)
        while array and array[-1] == len(array) - 1:
            array.pop()
        return hash(tuple(array))

    def __repr__(self):
        return f"Permutation({list(self._array)!r})"
