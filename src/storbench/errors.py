"""Typed errors.  Library code raises these; only the CLI turns them into one line and an exit code."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    ERROR = 1  # a run or command failed (fio error, store error)
    USAGE = 2  # bad input: arguments, suite files, targets
    REGRESSION = 3  # compare --fail-if-worse found a significant regression
    INTERRUPTED = 130  # Ctrl-C / SIGTERM


class StorbenchError(Exception):
    """An error with a one-line message meant for the user."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(StorbenchError):
    """Bad arguments or input that the user can fix."""

    exit_code = ExitCode.USAGE


class SuiteError(UsageError):
    """A suite file or workload definition is invalid."""


class TargetError(UsageError):
    """A target does not exist, is not writable, or may not be used."""


class FioParseError(StorbenchError):
    """Text that is not (complete) fio output."""

    exit_code = ExitCode.USAGE


class FioRunError(StorbenchError):
    """fio failed for one workload; ``reason`` is fio's own words."""

    def __init__(self, workload: str, reason: str) -> None:
        super().__init__(f"workload {workload!r}: fio failed: {reason}")
        self.workload = workload
        self.reason = reason


class FioMissingError(StorbenchError):
    exit_code = ExitCode.USAGE


class StoreError(StorbenchError):
    """The results database cannot be used (corrupt, newer schema, unreachable)."""


class Interrupted(StorbenchError):
    exit_code = ExitCode.INTERRUPTED


class RegressionError(StorbenchError):
    """compare --fail-if-worse: a configuration is significantly worse than the baseline."""

    exit_code = ExitCode.REGRESSION
