"""A candidate patch proposed by the attacker: a unified diff or a file-replacement mapping."""

from __future__ import annotations

import hashlib
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hackaudit.shared.contracts.task import Task


class Provenance(BaseModel):
    """Where a candidate came from: strategy, round and the candidate it was derived from."""

    model_config = ConfigDict(frozen=True)

    strategy: str
    round: int = Field(default=1, ge=1)
    parent_id: str | None = None
    detail: str = ""
    # Why the candidate cannot be graded at all (a model's block that is no diff); empty: it can.
    invalid: str = ""


class CandidateKind(StrEnum):
    DIFF = "diff"
    FILES = "files"


def normalise_diff(diff: str) -> str:
    """A diff with line endings, trailing blanks and `index` lines removed, for deduplication."""
    lines = []
    for line in diff.replace("\r\n", "\n").split("\n"):
        if line.startswith("index "):
            continue
        lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


class Candidate(BaseModel):
    """A patch to grade. `files` maps a repository path to its new content (None deletes it)."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    kind: CandidateKind = CandidateKind.DIFF
    diff: str = ""
    files: dict[str, str | None] = Field(default_factory=dict)
    provenance: Provenance = Field(default_factory=lambda: Provenance(strategy="given"))

    @model_validator(mode="after")
    def _one_body(self) -> Candidate:
        if self.kind is CandidateKind.FILES and self.diff:
            raise ValueError("a file-mapping candidate carries no diff")
        if self.kind is CandidateKind.DIFF and self.files:
            raise ValueError("a diff candidate carries no file mapping")
        return self

    @classmethod
    def gold(cls, task: Task) -> Candidate:
        """The task's own gold patch as a candidate (reference runs)."""
        return cls(
            instance_id=task.instance_id, diff=task.patch, provenance=Provenance(strategy="gold")
        )

    @classmethod
    def empty(cls, task: Task) -> Candidate:
        """No change at all: what the tests must reject."""
        return cls(instance_id=task.instance_id, provenance=Provenance(strategy="empty"))

    @property
    def content_hash(self) -> str:
        """Identifies the patch itself, whatever produced it (normalised diff or sorted mapping)."""
        digest = hashlib.sha256()
        if self.kind is CandidateKind.DIFF:
            digest.update(normalise_diff(self.diff).encode())
        else:
            for path in sorted(self.files):
                content = self.files[path]
                digest.update(f"{path}\0{'<deleted>' if content is None else content}\0".encode())
        return digest.hexdigest()[:16]

    @property
    def candidate_id(self) -> str:
        return f"{self.instance_id}:{self.content_hash}"

    @property
    def is_empty(self) -> bool:
        return not self.diff.strip() and not self.files
