import unittest

from inikit.errors import ParseError
from inikit.lexer import BLANK, COMMENT, CONTINUATION, OPTION, SECTION, tokenize


def kinds(text):
    return [line.kind for line in tokenize(text)]


class TokenizeTests(unittest.TestCase):
    def test_kinds(self):
        text = "[main]\n# note\nname = value\n    more\n\n; other note\n"
        self.assertEqual(kinds(text), [SECTION, COMMENT, OPTION, CONTINUATION, BLANK, COMMENT])

    def test_line_numbers_start_at_one(self):
        lines = list(tokenize("[a]\nx = 1\n"))
        self.assertEqual([line.lineno for line in lines], [1, 2])

    def test_section_name_is_stripped(self):
        (line,) = tokenize("[ server ]")
        self.assertEqual(line.name, "server")

    def test_option_key_is_lowercased(self):
        (line,) = tokenize("MaxConnections = 10")
        self.assertEqual(line.name, "maxconnections")
        self.assertEqual(line.value, "10")

    def test_colon_separator(self):
        (line,) = tokenize("path: /usr/local")
        self.assertEqual((line.name, line.value), ("path", "/usr/local"))

    def test_only_first_separator_splits(self):
        (line,) = tokenize("query = a=b:c")
        self.assertEqual((line.name, line.value), ("query", "a=b:c"))

    def test_indented_comment_is_a_comment(self):
        self.assertEqual(kinds("  # indented"), [COMMENT])

    def test_continuation_value_is_stripped(self):
        (line,) = tokenize("\t  second line  ")
        self.assertEqual(line.value, "second line")

    def test_raw_text_is_kept(self):
        (line,) = tokenize("key = value   ")
        self.assertEqual(line.raw, "key = value   ")


class TokenizeErrorTests(unittest.TestCase):
    def test_unclosed_section(self):
        with self.assertRaises(ParseError) as ctx:
            list(tokenize("[a]\n[broken\n"))
        self.assertEqual(ctx.exception.lineno, 2)

    def test_empty_section_name(self):
        with self.assertRaises(ParseError):
            list(tokenize("[  ]"))

    def test_line_without_separator(self):
        with self.assertRaises(ParseError) as ctx:
            list(tokenize("just words"))
        self.assertIn("key = value", str(ctx.exception))

    def test_missing_key(self):
        with self.assertRaises(ParseError):
            list(tokenize("= value"))


if __name__ == "__main__":
    unittest.main()
