"""combinat: integer partitions, permutations and integer polynomials."""

from combinat.partitions import partition_count, partitions
from combinat.permutation import Permutation
from combinat.poly import Poly

__all__ = ["Permutation", "Poly", "partition_count", "partitions"]
