import unittest

from combinat import Permutation


class ArrayFormTests(unittest.TestCase):
    def test_images(self):
        p = Permutation([2, 0, 1])
        self.assertEqual([p(i) for i in range(3)], [2, 0, 1])

    def test_points_past_the_size_are_fixed(self):
        self.assertEqual(Permutation([1, 0])(5), 5)

    def test_size_pads_with_fixed_points(self):
        self.assertEqual(Permutation([1, 0], size=4).array_form, [1, 0, 2, 3])

    def test_size_too_small(self):
        with self.assertRaises(ValueError):
            Permutation([1, 0, 2], size=2)

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            Permutation([0, 3, 1])

    def test_negative_or_not_int(self):
        for form in ([0, -1], [0, 1.0], [True, 0]):
            with self.subTest(form=form):
                with self.assertRaises(ValueError):
                    Permutation(form)


class CyclicFormTests(unittest.TestCase):
    def test_cycles_to_array(self):
        self.assertEqual(Permutation([[0, 2], [1, 3]]).array_form, [2, 3, 0, 1])
        self.assertEqual(Permutation([[1, 2, 3]]).array_form, [0, 2, 3, 1])

    def test_singleton_cycle_sets_the_size(self):
        self.assertEqual(Permutation([[3]]).array_form, [0, 1, 2, 3])

    def test_round_trip(self):
        p = Permutation([3, 0, 4, 1, 2])
        self.assertEqual(p.cyclic_form(), [[0, 3, 1], [2, 4]])
        self.assertEqual(Permutation(p.cyclic_form()), p)

    def test_negative_element(self):
        with self.assertRaises(ValueError):
            Permutation([[0, -1]])


class AlgebraTests(unittest.TestCase):
    def test_product_applies_left_first(self):
        p = Permutation([1, 2, 0])
        q = Permutation([[0, 1]])
        self.assertEqual((p * q).array_form, [0, 2, 1])

    def test_inverse(self):
        p = Permutation([2, 0, 3, 1])
        self.assertTrue((p * ~p).is_identity)
        self.assertEqual((~p).array_form, [1, 3, 0, 2])

    def test_power_and_order(self):
        p = Permutation([[0, 1, 2], [3, 4]])
        self.assertEqual(p.order(), 6)
        self.assertTrue((p**6).is_identity)
        self.assertFalse((p**3).is_identity)
        self.assertEqual(p**-1, ~p)

    def test_equality_ignores_trailing_fixed_points(self):
        self.assertEqual(Permutation([1, 0]), Permutation([1, 0, 2]))
        self.assertEqual(hash(Permutation([1, 0])), hash(Permutation([1, 0, 2])))
        self.assertNotEqual(Permutation([1, 0]), Permutation([0, 1]))

    def test_repr(self):
        self.assertEqual(repr(Permutation([[0, 1]])), "Permutation([1, 0])")


if __name__ == "__main__":
    unittest.main()
