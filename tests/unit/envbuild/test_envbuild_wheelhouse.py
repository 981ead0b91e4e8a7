"""The wheelhouse downloads only what it lacks and answers known requirements without pip.

pip is replaced by a small script that plays its part: offline (`--no-index`) it copies the
demo wheel from the `--find-links` folder if there, online it "downloads" it into `--dest`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import EnvBuildSettings, WheelhouseError
from hackaudit.sandbox.envbuild.pip_wheelhouse import PipWheelhouse

WHEEL = "demo-1.0-py3-none-any.whl"
FAKE_PIP = f"""#!/bin/bash
echo "$@" >> "$FAKE_PIP_LOG"
dest=""; links=""; offline=0; prev=""
for arg in "$@"; do
  [ "$prev" = "--dest" ] && dest="$arg"
  [ "$prev" = "--find-links" ] && links="$arg"
  [ "$arg" = "--no-index" ] && offline=1
  prev="$arg"
done
if [ "$offline" = 1 ]; then
  [ -f "$links/{WHEEL}" ] || exit 1
  cp "$links/{WHEEL}" "$dest/"
else
  [ -n "$FAKE_PIP_OFFLINE_ONLY" ] && {{ echo "no network" >&2; exit 1; }}
  printf 'wheel' > "$dest/{WHEEL}"
fi
"""


@pytest.fixture
def pip_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "pip.log"
    log.touch()
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))
    return log


@pytest.fixture
def wheelhouse(tmp_path: Path, pip_log: Path) -> PipWheelhouse:
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PIP)
    fake.chmod(0o755)
    settings = EnvBuildSettings(wheelhouse=tmp_path / "house", pip_python=str(fake))
    return PipWheelhouse(settings)


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_a_missing_package_is_downloaded_then_resolved_offline(
    wheelhouse: PipWheelhouse, pip_log: Path, tmp_path: Path
) -> None:
    wheels = wheelhouse.wheels_for(["demo"], tmp_path / "a")

    assert [w.name for w in wheels] == [WHEEL]
    calls = _calls(pip_log)
    assert ["--no-index" in c for c in calls] == [True, False, True]
    assert all("--only-binary=:all: --python-version 3.11 --implementation cp" in c for c in calls)


def test_known_requirements_are_answered_without_pip(
    wheelhouse: PipWheelhouse, pip_log: Path, tmp_path: Path
) -> None:
    wheelhouse.wheels_for(["demo"], tmp_path / "a")
    before = len(_calls(pip_log))

    wheels = wheelhouse.wheels_for(["demo"], tmp_path / "b")

    assert [w.name for w in wheels] == [WHEEL]
    assert wheels[0].read_bytes() == b"wheel"
    assert len(_calls(pip_log)) == before


def test_a_new_wheel_in_the_wheelhouse_makes_pip_resolve_again(
    wheelhouse: PipWheelhouse, pip_log: Path, tmp_path: Path
) -> None:
    wheelhouse.wheels_for(["demo"], tmp_path / "a")
    (tmp_path / "house" / "other-2.0-py3-none-any.whl").write_bytes(b"x")
    before = len(_calls(pip_log))

    wheelhouse.wheels_for(["demo"], tmp_path / "b")

    assert len(_calls(pip_log)) == before + 1


def test_a_package_pip_cannot_get_is_a_wheelhouse_error(
    wheelhouse: PipWheelhouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_OFFLINE_ONLY", "1")

    with pytest.raises(WheelhouseError, match="no network"):
        wheelhouse.wheels_for(["demo"], tmp_path / "a")


def test_no_packages_need_no_pip(wheelhouse: PipWheelhouse, pip_log: Path, tmp_path: Path) -> None:
    assert wheelhouse.wheels_for([], tmp_path / "a") == []
    assert _calls(pip_log) == []


def test_wheels_are_chosen_for_the_python_and_glibc_of_the_base(
    wheelhouse: PipWheelhouse, pip_log: Path, tmp_path: Path
) -> None:
    wheelhouse.wheels_for(["demo"], tmp_path / "a", python_version="3.9", glibc_minor=31)
    wheelhouse.wheels_for(["demo"], tmp_path / "b")

    calls = _calls(pip_log)
    on_39 = [c for c in calls if "--python-version 3.9 " in c]
    assert on_39 and all("manylinux_2_31_" in c and "manylinux_2_32_" not in c for c in on_39)
    default = [c for c in calls if "--python-version 3.11 " in c]
    assert default and all("manylinux_2_36_" in c for c in default)
