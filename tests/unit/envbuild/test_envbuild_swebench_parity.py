"""The image reproduces what SWE-bench's harness installs: editable self-installs, a path-based
editable install for repositories without pyproject.toml, one `pip install` per stage, the
setup.py requirements as the pre-install seds leave them, and the venv's packages for the
python tox links to."""

from __future__ import annotations

import dataclasses
import json

from hackaudit.sandbox.envbuild.recipe import (
    ImageInputs,
    WheelFile,
    dockerfile,
    editable_install,
    image_tag,
    is_editable_install,
)
from hackaudit.sandbox.envbuild.requirements import apply_sed_edits, setup_py_declared

INPUTS = ImageInputs(
    repo="Acme/Widget",
    base_image="hackaudit/base:bookworm-abc",
    base_image_id="sha256:" + "1" * 64,
    base_commit="c" * 40,
    pip_packages=("astroid==3.0.0a6", "pip", "setuptools"),
    wheels=(WheelFile("astroid-3.0.0a6-py3-none-any.whl", "a" * 64),),
    install="python -m pip install --no-build-isolation -e .",
    source="upstream",
)


def test_a_non_editable_self_install_becomes_editable() -> None:
    assert editable_install("python -m pip install .") == "python -m pip install -e ."
    assert editable_install("pip install -v .[test] && x") == "pip install -v -e .[test] && x"
    assert editable_install("python -m pip install -e .") == "python -m pip install -e ."
    assert editable_install("pip install ./vendor/pkg") == "pip install ./vendor/pkg"
    assert is_editable_install("python -m pip install -e .[test]")
    assert not is_editable_install("python -m pip install .")


def test_each_stage_is_its_own_pip_install_before_the_packages() -> None:
    staged = dataclasses.replace(INPUTS, earlier_stages=(("astroid==3.0.0a8", "pytest~=7.4"),))
    runs = [
        json.loads(line.removeprefix("RUN "))
        for line in dockerfile(staged).splitlines()
        if line.startswith('RUN ["/opt/venv/bin/pip"')
    ]

    assert [r[-2:] for r in runs] == [["astroid==3.0.0a8", "pytest~=7.4"], ["pip", "setuptools"]]
    assert "astroid==3.0.0a6" in runs[1]
    assert dockerfile(staged).count("COPY wheelhouse/") == 1
    assert image_tag(staged) != image_tag(INPUTS)


def test_the_system_python_sees_the_venv_only_when_asked() -> None:
    shared = dockerfile(dataclasses.replace(INPUTS, system_python_sees_venv=True))
    [line] = [line for line in shared.splitlines() if "hackaudit-venv.pth" in line]
    script = json.loads(line.removeprefix("RUN "))[-1]

    assert "hackaudit-venv.pth" not in dockerfile(INPUTS)
    assert "sys.prefix == sys.base_prefix and site.addsitedir" in script
    # Written by the system python before the venv comes first on PATH.
    assert shared.index("hackaudit-venv.pth") < shared.index("ENV VIRTUAL_ENV=")


SETUP_PY = """
from setuptools import setup
install_requires = [
    'sphinxcontrib-applehelp',
    'Jinja2>=2.3',
    'alabaster>=0.7,<0.8',
    'packaging',
]
extras_require = {'test': ['pytest', 'cython'], 'docs': ['x']}
setup(name='s', install_requires=install_requires, extras_require=extras_require)
"""
SEDS = (
    "sed -i 's/pytest/pytest -rA/' tox.ini",
    "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
    "sed -i 's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py",
    "sed -i 's/alabaster>=0.7,<0.8/alabaster>=0.7,<0.7.12/' setup.py",
    "sed -i \"s/'packaging',/'packaging', 'markupsafe<=2.0.1',/\" setup.py",
)


def test_setup_py_requirements_are_read_as_the_seds_leave_them() -> None:
    edited = apply_sed_edits(SETUP_PY, "setup.py", SEDS)

    assert setup_py_declared(edited, ("test",)) == (
        "sphinxcontrib-applehelp<=1.0.7",
        "Jinja2<3.0",
        "alabaster>=0.7,<0.7.12",
        "packaging",
        "markupsafe<=2.0.1",
        "pytest",
        "cython",
    )
    assert setup_py_declared(SETUP_PY) == (
        "sphinxcontrib-applehelp",
        "Jinja2>=2.3",
        "alabaster>=0.7,<0.8",
        "packaging",
    )


def test_setup_py_keywords_and_computed_values() -> None:
    literal = "setup(install_requires=['a>=1'], extras_require={'t': ['b']})"
    computed = "reqs = open('r').read().split()\nsetup(install_requires=reqs)"

    assert setup_py_declared(literal, ("t",)) == ("a>=1", "b")
    assert setup_py_declared(computed) == ()
    assert setup_py_declared("def (") == ()


# Sphinx 4.x's pins (SWE-bench's spec): a `grep -q ... && sed ... || sed ...` chooses the edit by
# what setup.py already says.
GREP_THEN_ELSE = [
    "grep -q 'sphinxcontrib-htmlhelp>=2.0.0' setup.py && "
    "sed -i 's/sphinxcontrib-htmlhelp>=2.0.0/sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4/' setup.py || "
    "sed -i 's/sphinxcontrib-htmlhelp/sphinxcontrib-htmlhelp<=2.0.4/' setup.py",
    "grep -q 'sphinxcontrib-serializinghtml>=1.1.5' setup.py && "
    "sed -i 's/sphinxcontrib-serializinghtml>=1.1.5/sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9/'"
    " setup.py || "
    "sed -i 's/sphinxcontrib-serializinghtml/sphinxcontrib-serializinghtml<=1.1.9/' setup.py",
]


def test_a_pin_chosen_by_grep_is_read_as_the_install_step_sees_it() -> None:
    bare = "\n".join(
        [
            "install_requires = [",
            "    'sphinxcontrib-htmlhelp',",
            "    'sphinxcontrib-serializinghtml',",
            "]",
        ]
    )
    bounded = bare.replace("htmlhelp'", "htmlhelp>=2.0.0'").replace(
        "serializinghtml'", "serializinghtml>=1.1.5'"
    )

    assert apply_sed_edits(bare, "setup.py", GREP_THEN_ELSE).split("\n")[1:3] == [
        "    'sphinxcontrib-htmlhelp<=2.0.4',",
        "    'sphinxcontrib-serializinghtml<=1.1.9',",
    ]
    assert apply_sed_edits(bounded, "setup.py", GREP_THEN_ELSE).split("\n")[1:3] == [
        "    'sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4',",
        "    'sphinxcontrib-serializinghtml>=1.1.5,<=1.1.9',",
    ]
    # Another file's test and edits leave setup.py alone.
    other = [c.replace("setup.py", "setup.cfg") for c in GREP_THEN_ELSE]
    assert apply_sed_edits(bare, "setup.py", other) == bare
