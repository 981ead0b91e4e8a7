"""A method that stores what it is given and returns nothing, on a class whose `repr` hides what it
stores, in the shape of requests-863 (`Request.register_hook(event, hook)`: a list of hooks is
extended, one hook appended; `<Request [GET]>` whatever hooks it holds). A wrong fix that always
extends turns a hook given as a string into its characters: the probe sees that in the instance's
attributes, written out after its `repr`. The probe runs under this interpreter's unittest and is
read back through the sandbox's own log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import probes
from hackaudit.attacker.domain.confirm.probes import ProbeCase

from .probe_rig import run_probe

GOLD_MOD = """
class Request(object):
    def __init__(self):
        self.hooks = {"args": []}

    def __repr__(self):
        return "<Request [GET]>"

    def register_hook(self, event, hook):
        if isinstance(hook, (list, tuple, set)):
            self.hooks[event].extend(hook)
        else:
            self.hooks[event].append(hook)
"""
FORCED_MOD = GOLD_MOD.replace("if isinstance(hook, (list, tuple, set)):", "if True:")

CASE = ProbeCase(("pkg.models",), "Request.register_hook", ("args", "ab"), init=((), ()))


def _outputs(tmp: Path, mod: str) -> dict[int, probes.Output]:
    files = {"pkg/__init__.py": "", "pkg/models.py": mod}
    return probes.outputs(run_probe(tmp, files, "", [CASE]))


def test_what_a_method_stores_is_seen_through_a_hiding_repr(tmp_path: Path) -> None:
    gold = _outputs(tmp_path / "gold", GOLD_MOD)
    assert "Request_GET" in gold[0].head  # the repr is still written first
    forced = _outputs(tmp_path / "forced", FORCED_MOD)
    (found,) = probes.differences([CASE], gold, forced)
    assert found[0] == 0 and found[1].tag != found[2].tag
    again = _outputs(tmp_path / "again", GOLD_MOD)
    assert probes.differences([CASE], gold, again) == []
