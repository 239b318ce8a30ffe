"""fio's failures in words: why a run failed, from fio's exit status, its ``fio:`` lines and the
jobs' error numbers (:func:`fio_failure_reason`). Pure."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import FioResult
    from .fioexec import FioInvocation


def _killed_reason(returncode: int) -> str:
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "an unknown signal"
    reason = f"fio was killed by signal {number} ({name})"
    if number == signal.SIGKILL:
        reason += "; the kernel's out-of-memory killer or another process stopped it"
    return reason


def errno_text(code: int) -> tuple[int, str]:
    """An error number as fio reported it, and its text.  Some engines (gfapi when its brick
    dies) report a negative errno as an unsigned 32- or 64-bit number: read those back."""
    if code >= 2**63:
        code = 2**64 - code
    elif code >= 2**31:
        code = 2**32 - code
    if 0 < code < 4096:
        return code, os.strerror(code)
    return code, "an error number fio's engine did not explain"


def fio_failure_reason(inv: FioInvocation, result: FioResult | None) -> str | None:
    """fio's own words for why a run failed, or None when it succeeded.

    Pure: looks at the return code, the ``fio:`` lines on stderr/stdout and the
    per-job error codes in the parsed result.
    """
    lines = [
        ln.strip()
        for ln in (inv.stderr_text + "\n" + inv.stdout_text).replace("\r", "\n").splitlines()
        if ln.strip().startswith("fio:")
    ]
    if inv.stopped_reason is not None:  # storbench stopped it (its server gone): that is why
        return inv.stopped_reason
    if result is not None:
        lines += [n for n in result.notes if n.startswith("fio:")]
    job_error = result.error if result is not None else 0
    if inv.returncode < 0:  # killed: whatever output there is, is not a finished result
        return _killed_reason(inv.returncode)
    if inv.returncode == 0 and not job_error and result is not None:
        return None
    explanatory = [
        ln for ln in lines if not ln.startswith("fio: pid=") and not ln.startswith("fio: file:")
    ]
    reason = None
    if explanatory:
        reason = explanatory[0][len("fio:") :].strip()
    elif lines:
        reason = lines[0][len("fio:") :].strip()
    if job_error:
        job_error, errtext = errno_text(job_error)
        if reason is None:
            reason = f"error {job_error} ({errtext})"
        elif errtext.lower() not in reason.lower():
            reason = f"{reason} ({errtext})"
    if reason is None:
        other = [ln.strip() for ln in inv.stderr_text.splitlines() if ln.strip()]
        reason = other[0] if other else f"fio exited with status {inv.returncode} and wrote no result"
    return reason
