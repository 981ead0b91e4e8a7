import unittest

from combinat import partition_count, partitions
from combinat.partitions import as_list


class PartitionTests(unittest.TestCase):
    def test_first_partition_is_n_itself(self):
        self.assertEqual(next(partitions(5)), {5: 1})

    def test_zero_has_the_empty_partition(self):
        self.assertEqual([dict(p) for p in partitions(0)], [{}])

    def test_parts_in_order(self):
        self.assertEqual(
            [as_list(p) for p in partitions(4)],
            [[4], [3, 1], [2, 2], [2, 1, 1], [1, 1, 1, 1]],
        )

    def test_largest_part_limited_by_m(self):
        self.assertEqual(
            [as_list(p) for p in partitions(5, m=2)],
            [[2, 2, 1], [2, 1, 1, 1], [1, 1, 1, 1, 1]],
        )

    def test_every_partition_sums_to_n(self):
        for n in range(1, 9):
            self.assertTrue(all(sum(k * v for k, v in p.items()) == n for p in partitions(n)))

    def test_counts_agree(self):
        for n in range(10):
            self.assertEqual(sum(1 for _ in partitions(n)), partition_count(n))
            self.assertEqual(sum(1 for _ in partitions(n, m=3)), partition_count(n, m=3))

    def test_known_counts(self):
        self.assertEqual([partition_count(n) for n in range(8)], [1, 1, 2, 3, 5, 7, 11, 15])
        self.assertEqual(partition_count(100), 190569292)


class PartitionErrorTests(unittest.TestCase):
    def test_negative_n(self):
        with self.assertRaises(ValueError):
            next(partitions(-1))

    def test_non_positive_m(self):
        with self.assertRaises(ValueError):
            next(partitions(3, m=0))

    def test_not_an_int(self):
        with self.assertRaises(TypeError):
            next(partitions(2.5))
        with self.assertRaises(TypeError):
            partition_count("3")


if __name__ == "__main__":
    unittest.main()
