import unittest

import inikit
from inikit import ConversionError, MissingOptionError, MissingSectionError

TEXT = """\
[DEFAULT]
retries = 3

[net]
timeout = 2.5
enabled = Yes
verbose = off
workers = 1_000
negative = -12
hosts = alpha, beta,
    gamma
"""


class GetterTests(unittest.TestCase):
    def setUp(self):
        self.cfg = inikit.loads(TEXT)

    def test_getint(self):
        self.assertEqual(self.cfg.getint("net", "retries"), 3)
        self.assertEqual(self.cfg.getint("net", "negative"), -12)

    def test_getint_allows_underscores(self):
        self.assertEqual(self.cfg.getint("net", "workers"), 1000)

    def test_getint_rejects_text(self):
        with self.assertRaises(ConversionError):
            self.cfg.getint("net", "enabled")

    def test_getfloat(self):
        self.assertEqual(self.cfg.getfloat("net", "timeout"), 2.5)

    def test_getbool(self):
        self.assertIs(self.cfg.getbool("net", "enabled"), True)
        self.assertIs(self.cfg.getbool("net", "verbose"), False)

    def test_getbool_rejects_other_words(self):
        with self.assertRaises(ConversionError) as ctx:
            self.cfg.getbool("net", "timeout")
        self.assertEqual(ctx.exception.value, "2.5")

    def test_getlist(self):
        self.assertEqual(self.cfg.getlist("net", "hosts"), ["alpha", "beta", "gamma"])

    def test_getlist_custom_separator(self):
        cfg = inikit.loads("[s]\nflags = a|b||c\n")
        self.assertEqual(cfg.getlist("s", "flags", separator="|"), ["a", "b", "c"])

    def test_fallback(self):
        self.assertEqual(self.cfg.getint("net", "missing", fallback=7), 7)
        self.assertIsNone(self.cfg.get("net", "missing", fallback=None))


class LookupTests(unittest.TestCase):
    def setUp(self):
        self.cfg = inikit.loads(TEXT)

    def test_missing_option(self):
        with self.assertRaises(MissingOptionError) as ctx:
            self.cfg.get("net", "nope")
        self.assertEqual(str(ctx.exception), "no option 'nope' in section [net]")

    def test_missing_section(self):
        with self.assertRaises(MissingSectionError):
            self.cfg.get("disk", "size")

    def test_missing_errors_are_key_errors(self):
        with self.assertRaises(KeyError):
            self.cfg.get("net", "nope")

    def test_has_option(self):
        self.assertTrue(self.cfg.has_option("net", "timeout"))
        self.assertTrue(self.cfg.has_option("net", "retries"))
        self.assertFalse(self.cfg.has_option("net", "nope"))
        self.assertFalse(self.cfg.has_option("disk", "timeout"))

    def test_options_list_own_then_defaults(self):
        self.assertEqual(self.cfg.options("net")[-1], "retries")
        self.assertEqual(self.cfg.options("net")[0], "timeout")

    def test_contains_and_getitem(self):
        self.assertIn("net", self.cfg)
        self.assertIn("DEFAULT", self.cfg)
        self.assertEqual(self.cfg["net"]["retries"], "3")


class MutationTests(unittest.TestCase):
    def test_set_and_get(self):
        cfg = inikit.loads("[s]\n")
        cfg.set("s", "Key", "v")
        self.assertEqual(cfg.get("s", "key"), "v")

    def test_set_requires_strings(self):
        cfg = inikit.loads("[s]\n")
        with self.assertRaises(TypeError):
            cfg.set("s", "n", 5)

    def test_to_dict(self):
        cfg = inikit.loads("[DEFAULT]\nd = 0\n[a]\nx = 1\n")
        self.assertEqual(cfg.to_dict(), {"a": {"x": "1", "d": "0"}})

    def test_dumps_round_trip(self):
        cfg = inikit.loads(TEXT)
        again = inikit.loads(cfg.dumps())
        self.assertEqual(again.to_dict(raw=True), cfg.to_dict(raw=True))


if __name__ == "__main__":
    unittest.main()
