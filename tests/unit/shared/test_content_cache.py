"""The shared content-addressed cache: an entry put under a hex digest comes back equal; a
damaged entry is a miss; a key that is not a hex digest is refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from hackaudit.shared.content_cache import InMemoryCache, JsonDirCache


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    tokens: int = 0


KEY = hashlib.sha256(b"question").hexdigest()


@pytest.mark.parametrize("kind", ["memory", "dir"])
def test_a_put_answer_is_got_back(kind: str, tmp_path: Path) -> None:
    cache = InMemoryCache[Answer]() if kind == "memory" else JsonDirCache(Answer, tmp_path)
    assert cache.get(KEY) is None
    cache.put(KEY, Answer(text="hi", tokens=3))
    assert cache.get(KEY) == Answer(text="hi", tokens=3)


def test_the_dir_cache_keeps_one_file_per_key_under_its_first_two_characters(
    tmp_path: Path,
) -> None:
    JsonDirCache(Answer, tmp_path).put(KEY, Answer(text="hi"))
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")] == [
        f"{KEY[:2]}/{KEY}.json"
    ]
    assert JsonDirCache(Answer, tmp_path).get(KEY) == Answer(text="hi")  # survives a restart


def test_a_damaged_entry_is_a_miss_and_the_next_put_repairs_it(tmp_path: Path) -> None:
    cache = JsonDirCache(Answer, tmp_path)
    cache.put(KEY, Answer(text="hi"))
    (tmp_path / KEY[:2] / f"{KEY}.json").write_text("{broken")
    assert cache.get(KEY) is None
    cache.put(KEY, Answer(text="again"))
    assert cache.get(KEY) == Answer(text="again")


@pytest.mark.parametrize("key", ["../../etc/passwd", "ABCDEF0123456789", "abc", ""])
def test_a_key_that_is_not_a_hex_digest_is_refused(key: str, tmp_path: Path) -> None:
    cache = JsonDirCache(Answer, tmp_path)
    with pytest.raises(ValueError, match="hex digests"):
        cache.get(key)
    with pytest.raises(ValueError, match="hex digests"):
        cache.put(key, Answer(text="x"))
    assert not any(tmp_path.iterdir())
