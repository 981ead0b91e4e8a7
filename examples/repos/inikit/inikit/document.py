"""The parsed configuration: sections of options with typed getters."""

from inikit.convert import to_bool, to_float, to_int, to_list
from inikit.errors import MissingOptionError, MissingSectionError
from inikit.interpolation import interpolate

DEFAULT_SECTION = "DEFAULT"
_MISSING = object()


class Section:
    """The options of one section, as stored (no interpolation, no defaults)."""

    def __init__(self, name):
        self.name = name
        self._options = {}

    def defines(self, option):
        return option.lower() in self._options

    def define(self, option, value):
        self._options[option.lower()] = value

    def raw(self, option):
        return self._options[option.lower()]

    def remove(self, option):
        del self._options[option.lower()]

    def keys(self):
        return list(self._options)

    def __len__(self):
        return len(self._options)

    def __repr__(self):
        return f"Section({self.name!r}, {len(self._options)} options)"


class Config:
    """Sections of options. Options of the default section are inherited by every section."""

    def __init__(self, default_section=DEFAULT_SECTION):
        self.default_section = default_section
        self._defaults = Section(default_section)
        self._sections = {}

    # -- structure --------------------------------------------------------------------------

    def add_section(self, name):
        if name == self.default_section:
            return self._defaults
        return self._sections.setdefault(name, Section(name))

    def sections(self):
        """Section names in file order, without the default section."""
        return list(self._sections)

    def has_section(self, name):
        return name in self._sections

    def _section(self, name):
        if name == self.default_section:
            return self._defaults
        try:
            return self._sections[name]
        except KeyError:
            raise MissingSectionError(name) from None

    def options(self, section):
        """Option names visible in ``section``: its own, then inherited defaults."""
        own = self._section(section)
        names = own.keys()
        names.extend(key for key in self._defaults.keys() if key not in names)
        return names

    def has_option(self, section, option):
        try:
            own = self._section(section)
        except MissingSectionError:
            return False
        return own.defines(option) or self._defaults.defines(option)

    # -- values -----------------------------------------------------------------------------

    def get(self, section, option, *, raw=False, fallback=_MISSING):
        """The text of ``option`` in ``section``, with references expanded unless ``raw``."""
        own = self._section(section)
        if own.defines(option):
            value = own.raw(option)
        elif self._defaults.defines(option):
            value = self._defaults.raw(option)
        elif fallback is not _MISSING:
            return fallback
        else:
            raise MissingOptionError(section, option.lower())
        return value if raw else interpolate(self, section, value)

    def _typed(self, convert, section, option, fallback):
        if fallback is not _MISSING and not self.has_option(section, option):
            return fallback
        return convert(self.get(section, option))

    def getint(self, section, option, *, fallback=_MISSING):
        return self._typed(to_int, section, option, fallback)

    def getfloat(self, section, option, *, fallback=_MISSING):
        return self._typed(to_float, section, option, fallback)

    def getbool(self, section, option, *, fallback=_MISSING):
        return self._typed(to_bool, section, option, fallback)

    def getlist(self, section, option, *, separator=",", fallback=_MISSING):
        return self._typed(lambda text: to_list(text, separator), section, option, fallback)

    def items(self, section):
        return [(name, self.get(section, name)) for name in self.options(section)]

    def set(self, section, option, value):
        if not isinstance(value, str):
            raise TypeError(f"option values are strings, got {type(value).__name__}")
        self._section(section).define(option, value)

    def to_dict(self, *, raw=False):
        """Every section (default section excluded) as a plain nested dict."""
        return {
            name: {option: self.get(name, option, raw=raw) for option in self.options(name)}
            for name in self._sections
        }

    def dumps(self):
        """Text that parses back to the same configuration (values raw)."""
        blocks = []
        for section in [self._defaults, *self._sections.values()]:
            if section is self._defaults and not len(section):
                continue
            lines = [f"[{section.name}]"]
            for key in section.keys():
                value = section.raw(key)
                first, *rest = value.split("\n")
                lines.append(f"{key} = {first}")
                lines.extend(f"    {line}" for line in rest)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def __contains__(self, section):
        return section == self.default_section or section in self._sections

    def __getitem__(self, section):
        return dict(self.items(section))

    def __repr__(self):
        return f"Config(sections={self.sections()!r})"
