"""Exceptions raised by inikit."""


class InikitError(Exception):
    """Base class of every inikit error."""


class ParseError(InikitError):
    """The text is not valid configuration syntax."""

    def __init__(self, lineno, message):
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno
        self.message = message


class DuplicateSectionError(ParseError):
    """A section header appears twice."""


class DuplicateOptionError(ParseError):
    """An option is set twice in the same section."""


class MissingSectionError(InikitError, KeyError):
    """A section was asked for that the file does not define."""

    def __init__(self, section):
        super().__init__(f"no section [{section}]")
        self.section = section

    def __str__(self):
        return self.args[0]


class MissingOptionError(InikitError, KeyError):
    """An option was asked for that the section does not define."""

    def __init__(self, section, option):
        super().__init__(f"no option {option!r} in section [{section}]")
        self.section = section
        self.option = option

    def __str__(self):
        return self.args[0]


class ConversionError(InikitError, ValueError):
    """A value could not be converted to the requested type."""

    def __init__(self, value, kind):
        super().__init__(f"cannot read {value!r} as {kind}")
        self.value = value
        self.kind = kind


class InterpolationError(InikitError):
    """A ${...} reference could not be resolved."""
