"""The task contract: one RL environment in SWE-bench form.

SWE-bench stores FAIL_TO_PASS / PASS_TO_PASS as JSON-encoded strings; they are accepted both that
way and as lists. Fields hackaudit adds (image, test command, log parser, environment, pass@1) are
optional, so plain SWE-bench rows validate unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hackaudit.shared.anatomy import DiffText


class PassAtOne(BaseModel):
    """External learnability data: `successes` out of `attempts` by some reference policy."""

    model_config = ConfigDict(frozen=True)

    successes: int = Field(ge=0)
    attempts: int = Field(ge=0)
    # Where the figures come from (a file given on the command line); empty: the task file.
    source: str = ""

    @model_validator(mode="after")
    def _successes_within_attempts(self) -> PassAtOne:
        if self.successes > self.attempts:
            raise ValueError("successes exceeds attempts")
        return self


class EnvironmentSpec(BaseModel):
    """How to build the task's image when no prebuilt `image` is given.

    `source` is a folder holding the repository's files at `base_commit`, relative to the task
    file. It is committed into `/testbed` as a git repository. Without `source`, the repository
    is taken at `base_commit` from a local clone or mirror (the builder's repos folder).
    `python` (e.g. "3.9") picks the base image that carries that Python; `base` names a Debian
    release instead (bookworm when neither is given). `pip_packages`, plus the requirements read
    from the first of `requirements_files` that exists at `base_commit`, come from the host's
    wheelhouse (containers have no network); then `pre_install` and `install` run in `/testbed`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str | None = None
    base: str | None = None
    python: str | None = Field(default=None, pattern=r"^3\.[0-9]+$")
    pip_packages: tuple[str, ...] = ()
    requirements_files: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()
    install: str | None = "pip install --no-build-isolation --no-deps -e ."


_CACHED_READINGS = ("gold_diff", "test_diff")


def _decode_test_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{field} is a string but not a JSON list: {exc.msg}") from exc
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} must be a list of test names")
    return list(value)


class Task(BaseModel):
    """One environment: repository at a commit, gold patch, test patch and the tests that grade."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")

    instance_id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    repo: str = Field(min_length=1)
    base_commit: str = Field(min_length=1)
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...] = Field(alias="FAIL_TO_PASS")
    pass_to_pass: tuple[str, ...] = Field(default=(), alias="PASS_TO_PASS")
    version: str | None = None
    environment_setup_commit: str | None = None
    problem_statement: str = ""
    hints_text: str = ""
    difficulty: str | None = None
    created_at: str | None = None
    image: str | None = None
    test_command: str | None = None
    log_parser: str | None = None
    environment: EnvironmentSpec | None = None
    pass_at_1: PassAtOne | None = None

    @field_validator("fail_to_pass", mode="before")
    @classmethod
    def _f2p(cls, value: Any) -> list[str]:
        return _decode_test_list(value, "FAIL_TO_PASS")

    @field_validator("pass_to_pass", mode="before")
    @classmethod
    def _p2p(cls, value: Any) -> list[str]:
        return _decode_test_list(value, "PASS_TO_PASS")

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        # SWE-bench exports write versions such as 3.0 as numbers.
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _has_tests(self) -> Task:
        if not self.fail_to_pass:
            raise ValueError("FAIL_TO_PASS is empty: the task grades nothing")
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy that reads its own patches again (the cached readings are of this one's)."""
        copy = super().model_copy(update=update, deep=deep)
        for name in _CACHED_READINGS:
            copy.__dict__.pop(name, None)
        return copy

    @cached_property
    def gold_diff(self) -> DiffText:
        """The gold patch, each reading of it taken once for the life of this message."""
        return DiffText(self.patch)

    @cached_property
    def test_diff(self) -> DiffText:
        """The test patch, each reading of it taken once for the life of this message."""
        return DiffText(self.test_patch)

    def swebench_row(self) -> dict[str, Any]:
        """The task in SWE-bench's own row format (test lists as JSON-encoded strings)."""
        row = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        row["FAIL_TO_PASS"] = json.dumps(list(self.fail_to_pass))
        row["PASS_TO_PASS"] = json.dumps(list(self.pass_to_pass))
        return row
