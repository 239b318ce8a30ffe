"""The edge of :mod:`.nfs_server`: ganesha's per-export counters asked over D-Bus (``dbus-send``)
before and after one fio run."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from .activity import BackendActivity
from .nfs_server import IoCounters, NfsServerActivity, activity_between, parse_io_reply

DBUS_TIMEOUT_S = 10.0


class GaneshaIoSampler:
    """ganesha's counters of one export around one fio run (a context manager; ``activity()``
    after it).  ``ask(method, export_id)`` returns dbus-send's text (injectable; the default runs
    ``dbus-send`` on ``bus``)."""

    def __init__(self, export_id: int, bus: str, version: str = "v3", *, ask: Callable[[str, int], str] | None = None) -> None:
        self.export_id = export_id
        self.version = version
        self.method = "GetNFSv40IO" if version.startswith("v4") else "GetNFSv3IO"
        self.ask = ask or (lambda method, export_id: _dbus_send(bus, method, export_id))
        self._before: tuple[float, IoCounters, IoCounters] | None = None
        self._activity = NfsServerActivity(export_id=export_id, version=version)

    def _read(self) -> tuple[float, IoCounters, IoCounters] | None:
        try:
            return parse_io_reply(self.ask(self.method, self.export_id))
        except (OSError, ValueError) as exc:
            self._activity = NfsServerActivity(export_id=self.export_id, version=self.version,
                                               problems=(f"ganesha's {self.method} of export {self.export_id}: {exc}",))  # fmt: skip
            return None

    def __enter__(self) -> GaneshaIoSampler:
        self._before = self._read()
        return self

    def __exit__(self, *exc: object) -> None:
        after = self._read() if self._before is not None else None
        if self._before is not None and after is not None:
            self._activity = activity_between(self.export_id, self.version, self._before, after)

    def activity(self) -> BackendActivity:
        return BackendActivity(nfs_server=self._activity)


def _dbus_send(bus: str, method: str, export_id: int) -> str:
    from ..process import proc

    try:
        done = proc.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd", "/org/ganesha/nfsd/ExportMgr",
                         f"org.ganesha.nfsd.exportstats.{method}", f"uint16:{export_id}"],
                        timeout_s=DBUS_TIMEOUT_S, env_extra={"DBUS_SYSTEM_BUS_ADDRESS": bus})  # fmt: skip
    except FileNotFoundError:
        raise OSError("dbus-send is not installed (Debian package dbus)") from None
    except subprocess.TimeoutExpired:
        raise OSError(f"dbus-send did not answer within {DBUS_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        raise OSError((done.stderr.strip() or f"dbus-send exit {done.returncode}").splitlines()[-1])
    return done.stdout
