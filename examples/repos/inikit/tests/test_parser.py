import io
import os
import tempfile
import unittest

import inikit
from inikit import DuplicateOptionError, DuplicateSectionError, ParseError

SAMPLE = """\
# Example service configuration
[DEFAULT]
log_dir = /var/log/svc

[server]
host = 0.0.0.0
Port = 8080

[paths]
search =
    /usr/share/svc
    /opt/svc
greeting = "  hello  "
"""


class ParseTests(unittest.TestCase):
    def setUp(self):
        self.cfg = inikit.loads(SAMPLE)

    def test_sections_in_order(self):
        self.assertEqual(self.cfg.sections(), ["server", "paths"])

    def test_simple_values(self):
        self.assertEqual(self.cfg.get("server", "host"), "0.0.0.0")
        self.assertEqual(self.cfg.get("server", "port"), "8080")

    def test_keys_are_case_insensitive(self):
        self.assertEqual(self.cfg.get("server", "PORT"), "8080")

    def test_continuation_lines_join_with_newlines(self):
        self.assertEqual(self.cfg.get("paths", "search"), "/usr/share/svc\n/opt/svc")

    def test_matching_quotes_are_removed(self):
        self.assertEqual(self.cfg.get("paths", "greeting"), "  hello  ")

    def test_unmatched_quote_is_kept(self):
        cfg = inikit.loads("[s]\nname = \"half\n")
        self.assertEqual(cfg.get("s", "name"), '"half')

    def test_single_quotes(self):
        cfg = inikit.loads("[s]\nname = 'x y'\n")
        self.assertEqual(cfg.get("s", "name"), "x y")

    def test_defaults_are_inherited(self):
        self.assertEqual(self.cfg.get("server", "log_dir"), "/var/log/svc")

    def test_comment_lines_are_ignored(self):
        cfg = inikit.loads("[s]\n; first\n# second\nk = v\n")
        self.assertEqual(cfg.options("s"), ["k"])

    def test_blank_line_ends_a_value(self):
        with self.assertRaises(ParseError):
            inikit.loads("[s]\nk = a\n\n    b\n")


class ParseErrorTests(unittest.TestCase):
    def test_option_before_section(self):
        with self.assertRaises(ParseError) as ctx:
            inikit.loads("orphan = 1\n[s]\n")
        self.assertEqual(ctx.exception.lineno, 1)

    def test_duplicate_option(self):
        with self.assertRaises(DuplicateOptionError) as ctx:
            inikit.loads("[s]\na = 1\nA = 2\n")
        self.assertEqual(ctx.exception.lineno, 3)

    def test_duplicate_section(self):
        with self.assertRaises(DuplicateSectionError) as ctx:
            inikit.loads("[s]\na = 1\n[t]\n[s]\n")
        self.assertIn("line 1", str(ctx.exception))

    def test_loads_rejects_bytes(self):
        with self.assertRaises(TypeError):
            inikit.loads(b"[s]\n")


class LoadTests(unittest.TestCase):
    def test_load_from_file_object(self):
        cfg = inikit.load(io.StringIO("[s]\nk = v\n"))
        self.assertEqual(cfg.get("s", "k"), "v")

    def test_load_from_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "app.ini")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("[s]\nk = caf\u00e9\n")
            self.assertEqual(inikit.load(path).get("s", "k"), "caf\u00e9")

    def test_custom_default_section(self):
        cfg = inikit.loads("[common]\nx = 1\n[s]\n", default_section="common")
        self.assertEqual(cfg.sections(), ["s"])
        self.assertEqual(cfg.get("s", "x"), "1")


if __name__ == "__main__":
    unittest.main()
