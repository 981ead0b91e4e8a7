"""Replies matched to their requests: a waiting call gets its reply, an early one is kept."""

from __future__ import annotations

import asyncio

from hackaudit.shared.replies import Replies


async def test_a_waiting_call_gets_the_reply_to_its_key() -> None:
    replies: Replies[str] = Replies()
    future = replies.expect("k")
    assert replies.expect("k") is future  # a second call for the same key shares it
    asyncio.get_running_loop().call_soon(replies.deliver, "k", "answer")
    assert await replies.wait("k", future, 5.0) == "answer"
    assert replies.take("k") is None  # delivered to the caller, not kept


async def test_a_reply_nobody_waits_for_is_kept_only_when_asked_to() -> None:
    replies: Replies[str] = Replies()
    replies.deliver("kept", "a")
    replies.deliver("dropped", "b", keep=False)
    assert replies.take("kept") == "a"
    assert replies.take("kept") is None
    assert replies.take("dropped") is None


async def test_a_reply_that_does_not_come_in_time_is_none_and_no_longer_waited_for() -> None:
    replies: Replies[str] = Replies()
    future = replies.expect("k")
    assert await replies.wait("k", future, 0.01) is None
    replies.deliver("k", "late")
    assert replies.take("k") == "late"
    assert replies.expect("k") is not future


async def test_a_key_is_answered_once_a_call_got_its_reply() -> None:
    replies: Replies[str] = Replies()
    future = replies.expect("waited")
    replies.deliver("waited", "a")
    assert await replies.wait("waited", future, 1.0) == "a"
    replies.deliver("kept", "b")
    replies.deliver("dropped", "c", keep=False)
    assert replies.answered("waited")
    assert not replies.answered("kept")  # kept, not taken yet
    assert replies.take("kept") == "b" and replies.answered("kept")
    assert not replies.answered("dropped")
    assert not replies.answered("never")
