"""inikit: read INI-style configuration files."""

from inikit.document import Config, Section
from inikit.errors import (
    ConversionError,
    DuplicateOptionError,
    DuplicateSectionError,
    InikitError,
    InterpolationError,
    MissingOptionError,
    MissingSectionError,
    ParseError,
)
from inikit.parser import load, loads, parse

__all__ = [
    "Config",
    "ConversionError",
    "DuplicateOptionError",
    "DuplicateSectionError",
    "InikitError",
    "InterpolationError",
    "MissingOptionError",
    "MissingSectionError",
    "ParseError",
    "Section",
    "load",
    "loads",
    "parse",
]

__version__ = "1.2.0"
