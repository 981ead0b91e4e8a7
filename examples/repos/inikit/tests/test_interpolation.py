import unittest

import inikit
from inikit import InterpolationError


class InterpolationTests(unittest.TestCase):
    def test_same_section_reference(self):
        cfg = inikit.loads("[s]\nbase = /srv\ndata = ${base}/data\n")
        self.assertEqual(cfg.get("s", "data"), "/srv/data")

    def test_other_section_reference(self):
        cfg = inikit.loads("[paths]\nroot = /opt\n[app]\nbin = ${paths:root}/bin\n")
        self.assertEqual(cfg.get("app", "bin"), "/opt/bin")

    def test_default_reference(self):
        cfg = inikit.loads("[DEFAULT]\nuser = ada\n[s]\nhome = /home/${user}\n")
        self.assertEqual(cfg.get("s", "home"), "/home/ada")

    def test_nested(self):
        cfg = inikit.loads("[s]\na = 1\nb = ${a}2\nc = ${b}3\n")
        self.assertEqual(cfg.get("s", "c"), "123")

    def test_escaped_dollar(self):
        cfg = inikit.loads("[s]\nprice = $$5 and $${x}\n")
        self.assertEqual(cfg.get("s", "price"), "$5 and ${x}")

    def test_raw_skips_expansion(self):
        cfg = inikit.loads("[s]\na = 1\nb = ${a}\n")
        self.assertEqual(cfg.get("s", "b", raw=True), "${a}")

    def test_unknown_reference(self):
        cfg = inikit.loads("[s]\nb = ${nope}\n")
        with self.assertRaises(InterpolationError):
            cfg.get("s", "b")

    def test_cycle(self):
        cfg = inikit.loads("[s]\na = ${b}\nb = ${a}\n")
        with self.assertRaises(InterpolationError) as ctx:
            cfg.get("s", "a")
        self.assertIn("cycle", str(ctx.exception))

    def test_malformed_reference(self):
        for value in ["$x", "${unclosed", "a $ b ${a}"]:
            cfg = inikit.loads(f"[s]\na = 1\nb = {value}\n")
            with self.subTest(value=value), self.assertRaises(InterpolationError):
                cfg.get("s", "b")


if __name__ == "__main__":
    unittest.main()
