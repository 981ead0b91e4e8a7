"""One structured logger configuration for every process (structlog, key-value or JSON lines)."""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrLogger:
    """Writes each line to whatever `sys.stderr` is at that moment, so a logger configured while
    stderr was redirected (a test runner's capture, a CLI runner) never writes to a closed file."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _stderr_logger(*_: object) -> _StderrLogger:
    return _StderrLogger()


def configure_logging(level: str = "INFO", *, json: bool = False) -> None:
    """Configure structlog once, at start-up. Logs go to stderr so stdout stays for results."""
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
