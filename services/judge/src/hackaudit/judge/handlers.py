"""Thin handler: a judge request in, the use case, the answer out."""

from __future__ import annotations

from hackaudit.judge.service_layer.judging import Judge
from hackaudit.shared.contracts import JudgeCompleted, JudgeRequested


async def handle_judge_requested(request: JudgeRequested, judge: Judge) -> JudgeCompleted:
    return await judge.handle(request)
