"""The shared state store: a state saved under its key comes back equal, in memory or on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from hackaudit.shared.state_store import InMemoryStateStore, JsonFileStateStore


class Journal(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    steps: tuple[str, ...] = ()


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    if request.param == "memory":
        return InMemoryStateStore(Journal)
    return JsonFileStateStore(Journal, tmp_path / "states")


def test_an_unknown_key_loads_nothing(store) -> None:
    assert store.load("never-saved") is None


def test_a_saved_state_loads_equal_and_a_later_save_replaces_it(store) -> None:
    store.save(Journal(key="a", steps=("one",)))
    store.save(Journal(key="b"))
    store.save(Journal(key="a", steps=("one", "two")))
    assert store.load("a") == Journal(key="a", steps=("one", "two"))
    assert store.load("b") == Journal(key="b")


def test_the_file_store_keeps_one_json_file_per_key_with_a_safe_name(tmp_path: Path) -> None:
    store = JsonFileStateStore(Journal, tmp_path, indent=1)
    store.save(Journal(key="../up/and:out", steps=("x",)))
    (path,) = tmp_path.iterdir()
    assert path.name == ".._up_and_out.json"
    assert json.loads(path.read_text()) == {"key": "../up/and:out", "steps": ["x"]}
    assert "\n " in path.read_text()  # indented as asked
    assert JsonFileStateStore(Journal, tmp_path).load("../up/and:out") == Journal(
        key="../up/and:out", steps=("x",)
    )


def test_a_failed_write_leaves_the_previous_state_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonFileStateStore(Journal, tmp_path)
    store.save(Journal(key="a", steps=("kept",)))

    def fail(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        store.save(Journal(key="a", steps=("lost",)))
    monkeypatch.undo()
    assert store.load("a") == Journal(key="a", steps=("kept",))
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
