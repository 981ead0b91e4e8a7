"""Faults shared by every service. Expected outcomes (a patch that fails, a timeout) are values in
the contracts, not exceptions; these are for what went wrong around them.

    HackauditError
    ├── BusUnavailableError      the NATS server cannot be started or reached
    ├── TransientError           worth another try later: the message is nacked with a delay
    │   └── LLMUnavailableError  a model unreachable, or failing after the SDK's own retries
    └── PermanentError           no retry will help: the message goes to the dead-letter subject
"""

from __future__ import annotations


class HackauditError(Exception):
    """Base of every hackaudit fault."""


class BusUnavailableError(HackauditError):
    """The NATS server cannot be started or reached."""


class TransientError(HackauditError):
    """A fault that may pass (a busy engine, a lost connection): retry the message later."""


class LLMUnavailableError(TransientError):
    """The model could not be reached or answered with an error after the allowed retries."""


class PermanentError(HackauditError):
    """A fault no retry will mend (a message that cannot be handled): dead-letter it."""
