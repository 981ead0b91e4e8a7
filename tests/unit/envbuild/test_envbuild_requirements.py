"""Requirements read from a repository's own files: includes followed, local lines skipped."""

from __future__ import annotations

from hackaudit.sandbox.envbuild.requirements import (
    build_requirements,
    declared_requirements,
    install_extras,
    read_requirements,
    requirement_lines,
)

FILES = {
    "requirements_test.txt": (
        "-r requirements_test_min.txt\n"
        "# a comment\n"
        "coverage~=6.4  # trailing comment\n"
        "pytest-cov \\\n    ~=3.0\n"
    ),
    "requirements_test_min.txt": (
        "-e .[testutils]\n"
        "astroid==2.11.6\n"
        "--index-url https://example.invalid/simple\n"
        "./vendored/pkg\n"
        "git+https://example.invalid/x.git\n"
        "typing-extensions~=4.2; python_version < '3.10'\n"
        "-r requirements_test.txt\n"
    ),
    "docs/requirements.txt": "--requirement ../base.txt\nsphinx\n",
    "base.txt": "six\n",
}


def _read(path: str) -> str | None:
    return FILES.get(path)


def test_includes_are_followed_and_local_lines_skipped() -> None:
    found = read_requirements(["requirements_test.txt"], _read)

    assert found == (
        "astroid==2.11.6",
        "typing-extensions~=4.2; python_version < '3.10'",
        "coverage~=6.4",
        "pytest-cov ~=3.0",
    )


def test_the_first_existing_file_is_read_and_includes_are_relative_to_it() -> None:
    assert read_requirements(["missing.txt", "docs/requirements.txt"], _read) == ("six", "sphinx")
    assert read_requirements(["missing.txt"], _read) == ()


def test_comments_and_continuations() -> None:
    assert requirement_lines("a  # x\n\n#only\nb \\\n  >=1\n") == ["a", "b >=1"]


def test_build_requirements_come_from_pyproject() -> None:
    text = '[build-system]\nrequires = ["setuptools>=45", "setuptools_scm[toml]>=6.2"]\n'

    assert build_requirements(text) == ("setuptools>=45", "setuptools_scm[toml]>=6.2")
    assert build_requirements(None) == ()
    assert build_requirements("not toml [") == ()
    assert build_requirements("[project]\nname = 'x'\n") == ()


def test_declared_requirements_and_extras() -> None:
    pyproject = (
        '[project]\nname = "x"\ndependencies = ["attrs>=19"]\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\ndocs = ["sphinx"]\n'
    )
    setup_cfg = (
        "[options]\ninstall_requires =\n    iniconfig\n    colorama;sys_platform=='win32'\n"
        "setup_requires =\n    setuptools-scm\n"
        "[options.extras_require]\ntesting =\n    hypothesis>=3.56\n"
    )

    assert declared_requirements(pyproject, None, ["test"]) == ("attrs>=19", "pytest")
    assert declared_requirements(None, setup_cfg, ["testing"]) == (
        "iniconfig",
        "colorama;sys_platform=='win32'",
        "setuptools-scm",
        "hypothesis>=3.56",
    )
    assert declared_requirements(None, None) == ()


def test_install_extras_are_read_from_the_command() -> None:
    assert install_extras("python -m pip install -e .[test] --verbose") == ("test",)
    assert install_extras("pip install -e .[dev, test]") == ("dev", "test")
    assert install_extras("python -m pip install -e .") == ()
    assert install_extras(None) == ()


def test_a_semicolon_list_in_setup_cfg_is_split_but_a_marker_is_kept() -> None:
    # astropy 3.1's setup.cfg, setuptools' older `list-semi` form
    setup_cfg = (
        "[options]\ninstall_requires = numpy>=1.13\n"
        "[options.extras_require]\n"
        "test = pytest-astropy; pytest-xdist; pytest-mpl\n"
        "win = colorama; sys_platform == 'win32'\n"
    )

    assert declared_requirements(None, setup_cfg, ["test"]) == (
        "numpy>=1.13",
        "pytest-astropy",
        "pytest-xdist",
        "pytest-mpl",
    )
    assert declared_requirements(None, setup_cfg, ["win"])[1:] == (
        "colorama; sys_platform == 'win32'",
    )
