"""Building a Config from configuration text."""

import os

from inikit.document import DEFAULT_SECTION, Config
from inikit.errors import DuplicateOptionError, DuplicateSectionError, ParseError
from inikit.lexer import BLANK, COMMENT, CONTINUATION, OPTION, QUOTES, SECTION, tokenize


def _unquote(value):
    """Drop one pair of matching quotes around a value."""
    if value[0] in QUOTES and value[-1] == value[0] and len(value) > 1:
        return value[1:-1]
    return value


class _Builder:
    def __init__(self, config):
        self.config = config
        self.section = None
        self.key = None
        self.parts = []
        self.seen_sections = {}

    def start_section(self, line):
        self.finish_option()
        name = line.name
        if name in self.seen_sections:
            first = self.seen_sections[name]
            raise DuplicateSectionError(
                line.lineno, f"section [{name}] already defined on line {first}"
            )
        self.seen_sections[name] = line.lineno
        self.section = self.config.add_section(name)

    def start_option(self, line):
        self.finish_option()
        if self.section is None:
            raise ParseError(line.lineno, f"option {line.name!r} appears before any section")
        if self.section.defines(line.name):
            raise DuplicateOptionError(
                line.lineno, f"option {line.name!r} repeated in section [{self.section.name}]"
            )
        self.key = line.name
        self.parts = [line.value]

    def continue_option(self, line):
        if self.key is None:
            raise ParseError(line.lineno, "continuation line without an option above it")
        self.parts.append(line.value)

    def finish_option(self):
        if self.key is None:
            return
        value = "\n".join(part for part in self.parts if part).strip()
        self.section.define(self.key, _unquote(value))
        self.key = None
        self.parts = []


def parse(text, *, default_section=DEFAULT_SECTION):
    """Parse configuration text into a Config."""
    builder = _Builder(Config(default_section=default_section))
    for line in tokenize(text):
        if line.kind == SECTION:
            builder.start_section(line)
        elif line.kind == OPTION:
            builder.start_option(line)
        elif line.kind == CONTINUATION:
            builder.continue_option(line)
        elif line.kind == BLANK:
            builder.finish_option()
        elif line.kind == COMMENT:
            continue
    builder.finish_option()
    return builder.config


def loads(text, **options):
    """Parse configuration held in a string."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return parse(text, **options)


def load(source, encoding="utf-8", **options):
    """Parse configuration from a path or an open text file."""
    if isinstance(source, (str, bytes, os.PathLike)):
        with open(source, encoding=encoding) as handle:
            return parse(handle.read(), **options)
    return parse(source.read(), **options)
