"""Install commands are made to work without network; steps that need it are set aside."""

from __future__ import annotations

import pytest

from hackaudit.sandbox.envbuild.recipe import offline_install, runnable_pre_install


@pytest.mark.parametrize(
    ("command", "offline"),
    [
        ("python -m pip install -e .", "python -m pip install --no-build-isolation -e ."),
        (
            "python -m pip install -e .[test] --verbose",
            "python -m pip install --no-build-isolation -e .[test] --verbose",
        ),
        ("pip3 install .", "pip3 install --no-build-isolation ."),
        (
            "python -m pip install -v --no-use-pep517 --no-build-isolation -e .",
            "python -m pip install -v --no-use-pep517 --no-build-isolation -e .",
        ),
        ("python setup.py install", "python setup.py install"),
        (None, None),
    ],
)
def test_pip_installs_get_no_build_isolation_once(command: str | None, offline: str | None) -> None:
    assert offline_install(command) == offline


def test_network_and_package_manager_steps_are_skipped() -> None:
    steps = (
        "apt-get update && apt-get install -y locales",
        "echo 'en_US UTF-8' > /etc/locale.gen",
        "locale-gen en_US.UTF-8",
        'QHULL_URL="x"; wget $QHULL_URL',
        "sed -i 's/pytest/pytest -rA/' tox.ini",
    )

    kept, skipped = runnable_pre_install(steps)

    assert kept == (steps[1], steps[4])
    assert skipped == (steps[0], steps[2], steps[3])
