"""The image recipe as pure functions: the Dockerfile text and the tag that names its inputs.

An image is named by a hash of everything that decides its content: the base image id, the
Dockerfile text (which spells the packages and the install command), the wheel files' hashes, the
base commit and this recipe's version. An unchanged task therefore maps to an existing tag and is
never rebuilt; tasks that share a repository, commit and spec share one image; and any change to
the recipe, a wheel or the base image makes a new tag instead of reusing a stale image.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

# Bump when anything that shapes the image changes outside the Dockerfile text (the way the
# source is copied and committed, the build context layout).
RECIPE_VERSION = 1

TESTBED = "/testbed"
VENV = "/opt/venv"
WHEELS_IN_IMAGE = "/tmp/wheelhouse"
CONTEXT_WHEELS = "wheelhouse"
CONTEXT_TESTBED = "testbed"
RUNNER = "runner"
TAG_PREFIX = "hackaudit-env"
BUILD_TOOLS = ("wheel",)
# An upstream repository is installed without build isolation and without network, so its
# build backend and a current pip (editable installs of pyproject builds) come from the wheels.
UPSTREAM_BUILD_TOOLS = ("pip", "setuptools", "wheel")
# Pre-install steps that need the network or Debian packages cannot run in a network-less build.
_NEEDS_NETWORK = re.compile(r"\b(apt-get|apt|wget|curl|locale-gen|conda)\b")
_PIP_INSTALL = re.compile(r"\bpip3?\s+install\b")
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class WheelFile:
    name: str
    sha256: str


@dataclass(frozen=True)
class ImageInputs:
    """Everything one environment image is made from."""

    repo: str
    base_image: str
    base_image_id: str
    base_commit: str
    pip_packages: tuple[str, ...]
    wheels: tuple[WheelFile, ...]
    install: str | None
    pre_install: tuple[str, ...] = ()
    skipped_pre_install: tuple[str, ...] = ()
    install_env: tuple[tuple[str, str], ...] = ()
    keep_wheels_for_install: bool = False
    create_runner: bool = False
    source: str = "folder"
    # Installed before `pip_packages`, each its own `pip install` (requirement files first).
    earlier_stages: tuple[tuple[str, ...], ...] = ()
    # The system python sees the venv's packages (see `_system_python_sees_venv`).
    system_python_sees_venv: bool = False


def normalised_packages(packages: tuple[str, ...]) -> tuple[str, ...]:
    """Sorted and deduplicated, so the order a task lists them in does not split images."""
    return tuple(sorted({p.strip() for p in packages if p.strip()}))


def with_build_tools(
    packages: tuple[str, ...], install: str | None, tools: tuple[str, ...] = BUILD_TOOLS
) -> tuple[str, ...]:
    """The packages plus the build tools an install command needs, unless the task names them.

    A venv on the base image has setuptools but no `wheel`, without which its setuptools cannot
    build (`pip install --no-build-isolation -e .` fails); builds run without network, so the
    tool comes from the wheelhouse like every other package. A task that names it itself (a
    pinned version) keeps its own.
    """
    if not install:
        return normalised_packages(packages)
    named = {requirement_name(p) for p in packages}
    missing = tuple(tool for tool in tools if requirement_name(tool) not in named)
    return normalised_packages(packages + missing)


# Editable wheels (PEP 660) came with setuptools 64; older ones install a project in editable
# mode only through its setup.py.
EDITABLE_SETUPTOOLS = "setuptools>=64"
_LATER_SETUPTOOLS = ("64.0.0", "68.0.0", "75.0.0", "80.0.0")


def editable_build_tools(build: tuple[str, ...]) -> tuple[str, ...]:
    """A project's build requirements, for an editable install of a project without setup.py:
    a setuptools pin that admits no release with editable wheels (`setuptools~=62.6`, pylint
    2.15) becomes `setuptools>=64`, since pip has no other way to install it in editable mode."""
    kept: list[str] = []
    for requirement in build:
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            kept.append(requirement)
            continue
        too_old = requirement_name(parsed.name) == "setuptools" and not any(
            parsed.specifier.contains(v) for v in _LATER_SETUPTOOLS
        )
        kept.append(EDITABLE_SETUPTOOLS if too_old else requirement)
    return tuple(kept)


def offline_install(command: str | None) -> str | None:
    """The install command with `--no-build-isolation` on each `pip install` that lacks it.

    Build isolation would fetch the build requirements from the network; they are installed
    into the venv from the wheelhouse beforehand instead.
    """
    if not command or "--no-build-isolation" in command:
        return command
    return _PIP_INSTALL.sub(lambda m: f"{m.group(0)} --no-build-isolation", command)


_NON_EDITABLE_SELF = re.compile(
    r"(\bpip3?\s+install(?:\s+--?(?!e\b|editable\b)[A-Za-z][\w-]*)*)\s+(\.(?:\[[^\]\s]*\])?)(?=\s|$|;|&|\|)"
)
# setuptools' compat editable mode puts the repository folder on sys.path by a .pth file, as the
# `setup.py develop` that pip ran for a repository without pyproject.toml before pip 25.1 did.
LEGACY_EDITABLE_ENV = ("PIP_CONFIG_SETTINGS", "editable_mode=compat")


def editable_install(command: str | None) -> str | None:
    """The install command with `pip install .` (the repository itself) made `pip install -e .`.

    SWE-bench's evaluation script applies the candidate patch and then re-runs the spec's install
    command, so with `pip install .` the tests import the patched code. The sandbox runs the
    tests as an unprivileged user that cannot write the venv, so the install cannot be re-run
    there; an editable install at build time has the same effect: the installed package is the
    repository's working tree, and a patch applied to it is what the tests import.
    """
    if not command:
        return command
    return _NON_EDITABLE_SELF.sub(lambda m: f"{m.group(1)} -e {m.group(2)}", command)


def is_editable_install(command: str | None) -> bool:
    return bool(command) and bool(
        re.search(r"\bpip3?\s+install\b.*\s(-e|--editable)\s", command or "")
    )


def runnable_pre_install(commands: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(steps that run, steps skipped because they need the network or Debian packages)."""
    kept = tuple(c for c in commands if not _NEEDS_NETWORK.search(c))
    skipped = tuple(c for c in commands if _NEEDS_NETWORK.search(c))
    return kept, skipped


def requirement_name(requirement: str) -> str:
    """`Foo_Bar[extra]>=1.0` -> `foo-bar`, the name as pip compares it."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else requirement.strip()


def repo_slug(repo: str) -> str:
    """`Owner/Name` -> `owner__name`, within Docker's repository-name alphabet."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", repo.lower().replace("/", "__")).strip("._-")
    return slug[:100] or "repo"


def dockerfile(inputs: ImageInputs) -> str:
    """The build recipe: a venv from the copied wheels, the repository at /testbed, the install."""
    lines = [
        f"# hackaudit environment image, recipe {RECIPE_VERSION}",
        f"FROM {inputs.base_image}",
        "USER root",
        f"RUN git config --system --add safe.directory '*' && python3 -m venv {VENV}",
        *_system_python_sees_venv(inputs),
        *_runner_user(inputs),
        f"ENV VIRTUAL_ENV={VENV} PATH={VENV}/bin:{_SYSTEM_PATH} PIP_NO_INDEX=1 "
        "PIP_DISABLE_PIP_VERSION_CHECK=1",
    ]
    if inputs.earlier_stages:
        lines.append(f"COPY {CONTEXT_WHEELS}/ {WHEELS_IN_IMAGE}/")
    for stage in inputs.earlier_stages:
        lines.append(f"RUN {json.dumps(_pip_install(stage, upgrade=False))}")
    if inputs.pip_packages:
        # The venv's own pip and setuptools are old on some bases; the wheels' win.
        pip = _pip_install(inputs.pip_packages, upgrade=inputs.source == "upstream")
        if not inputs.earlier_stages:
            lines.append(f"COPY {CONTEXT_WHEELS}/ {WHEELS_IN_IMAGE}/")
        lines.append(f"RUN {json.dumps(pip)}")
        if not inputs.keep_wheels_for_install:
            lines.append(f"RUN rm -rf {WHEELS_IN_IMAGE}")
    lines += [
        f"COPY --chown={RUNNER}:{RUNNER} {CONTEXT_TESTBED}/ {TESTBED}/",
        f"WORKDIR {TESTBED}",
    ]
    if inputs.pre_install:
        script = "\n".join(inputs.pre_install)
        lines.append(f"RUN {json.dumps(['/bin/bash', '-eo', 'pipefail', '-c', script])}")
    if inputs.install:
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in inputs.install_env)
        if inputs.keep_wheels_for_install:
            exports += f"export PIP_FIND_LINKS={WHEELS_IN_IMAGE}\n"
        script = exports + inputs.install
        lines.append(f"RUN {json.dumps(['/bin/bash', '-eo', 'pipefail', '-c', script])}")
    if inputs.pip_packages and inputs.keep_wheels_for_install:
        lines.append(f"RUN rm -rf {WHEELS_IN_IMAGE}")
    # Only what the install created is re-owned, so the repository's layer is not copied again.
    lines += [
        f"RUN find {TESTBED} ! -user {RUNNER} -exec chown -h {RUNNER}:{RUNNER} {{}} +",
        f"USER {RUNNER}",
        f"CMD {json.dumps(['/bin/bash'])}",
    ]
    return "\n".join(lines) + "\n"


def _pip_install(packages: tuple[str, ...], *, upgrade: bool) -> list[str]:
    return [
        f"{VENV}/bin/pip",
        "install",
        "--no-index",
        "--no-cache-dir",
        "--find-links",
        WHEELS_IN_IMAGE,
        *(["--upgrade"] if upgrade else []),
        *packages,
    ]


def _system_python_sees_venv(inputs: ImageInputs) -> list[str]:
    """A `.pth` file that gives the system python the venv's packages.

    `tox --current-env` (the tox-current-env plugin) runs its commands with a python linked to
    the one tox runs on. A python reached by a link finds no `pyvenv.cfg` beside the link, so it
    starts as the system python without the venv's packages (pytest is "not found"); SWE-bench's
    conda python has its packages in its own prefix and does not lose them. The file adds the
    venv's site-packages only to a python that is not in a venv itself.
    """
    if not inputs.system_python_sees_venv:
        return []
    venv_site = (
        f"$({VENV}/bin/python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
    )
    script = (
        f'venv_site="{venv_site}"\n'
        # The first site directory the system python really reads (Debian lists others).
        "system_site=\"$(python3 -c 'import site, sys; "
        "print([p for p in site.getsitepackages() if p in sys.path][0])')\"\n"
        'mkdir -p "$system_site"\n'
        "printf 'import sys, site; sys.prefix == sys.base_prefix and site.addsitedir(%s)\\n' "
        '"\\"$venv_site\\"" > "$system_site/hackaudit-venv.pth"'
    )
    return [f"RUN {json.dumps(['/bin/bash', '-eo', 'pipefail', '-c', script])}"]


def _runner_user(inputs: ImageInputs) -> list[str]:
    """An image used as it is (not our Debian base) may lack the user the image runs as."""
    if not inputs.create_runner:
        return []
    return [
        f"RUN id -u {RUNNER} >/dev/null 2>&1 || "
        f"useradd --create-home --uid 1000 --shell /bin/bash {RUNNER}"
    ]


def inputs_digest(inputs: ImageInputs) -> str:
    payload: dict[str, object] = {
        "recipe": RECIPE_VERSION,
        "base_image_id": inputs.base_image_id,
        "base_commit": inputs.base_commit,
        "dockerfile": dockerfile(inputs).replace(f"FROM {inputs.base_image}", "FROM <base>"),
        "wheels": sorted((w.name, w.sha256) for w in inputs.wheels),
    }
    if inputs.source != "folder":
        payload["source"] = inputs.source
    encoded = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def image_tag(inputs: ImageInputs) -> str:
    return f"{TAG_PREFIX}/{repo_slug(inputs.repo)}:{inputs_digest(inputs)[:20]}"


def image_labels(inputs: ImageInputs) -> dict[str, str]:
    return {
        "hackaudit.recipe": str(RECIPE_VERSION),
        "hackaudit.repo": inputs.repo,
        "hackaudit.base_commit": inputs.base_commit,
        "hackaudit.inputs": inputs_digest(inputs),
        "hackaudit.pip_packages": shlex.join(inputs.pip_packages),
        "hackaudit.source": inputs.source,
        "hackaudit.skipped_pre_install": json.dumps(list(inputs.skipped_pre_install)),
    }
