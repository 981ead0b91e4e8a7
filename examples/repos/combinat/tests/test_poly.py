import unittest

from combinat import Poly


class ArithmeticTests(unittest.TestCase):
    def test_trailing_zeros_dropped(self):
        self.assertEqual(Poly([1, 2, 0, 0]).coeffs, (1, 2))
        self.assertEqual(Poly([0, 0]).degree, -1)

    def test_add_and_sub(self):
        self.assertEqual(Poly([1, 2]) + Poly([0, 0, 3]), Poly([1, 2, 3]))
        self.assertEqual(Poly([1, 2]) - Poly([1, 2]), Poly())
        self.assertEqual(Poly([1, 2]) + 4, Poly([5, 2]))

    def test_mul(self):
        self.assertEqual(Poly([1, 1]) * Poly([1, 1]), Poly([1, 2, 1]))
        self.assertEqual(3 * Poly([1, 2]), Poly([3, 6]))
        self.assertEqual(Poly([1, 1]) * Poly(), Poly())

    def test_evaluate(self):
        self.assertEqual(Poly([1, 2, 1])(2), 9)
        self.assertEqual(Poly()(7), 0)

    def test_coefficients_must_be_ints(self):
        with self.assertRaises(TypeError):
            Poly([1, 0.5])


class PrintingTests(unittest.TestCase):
    def test_positive_coefficients(self):
        self.assertEqual(str(Poly([1, 2, 1])), "x**2 + 2*x + 1")
        self.assertEqual(str(Poly([0, 1])), "x")
        self.assertEqual(str(Poly([5])), "5")

    def test_zero(self):
        self.assertEqual(str(Poly()), "0")

    def test_leading_negative(self):
        self.assertEqual(str(Poly([0, 0, -1])), "-x**2")
        self.assertEqual(str(Poly([-4])), "-4")

    def test_repr(self):
        self.assertEqual(repr(Poly([1, 0, 3])), "Poly([1, 0, 3])")


if __name__ == "__main__":
    unittest.main()
