"""The NBD sampler (edge): ``nbdinfo --map`` of the export before fio runs (argument lists, a timeout)."""

from __future__ import annotations

from collections.abc import Callable

from ..storage.probe.base import SubprocessRunner
from .activity import BackendActivity
from .nbd import NbdActivity, parse_nbdinfo_map, unwritten_bytes

TIMEOUT_S = 15.0


def _run(argv: list[str]) -> tuple[int, str, str]:
    return SubprocessRunner(TIMEOUT_S).run(argv)


class NbdSampler:
    def __init__(self, uri: str, area_bytes: int | None = None, *, run: Callable[[list[str]], tuple[int, str, str]] = _run) -> None:
        self.uri = uri
        self.area_bytes = area_bytes
        self.run = run
        self._activity = NbdActivity(uri=uri)

    def __enter__(self) -> NbdSampler:
        problems: list[str] = []
        size = None
        rc, out, err = self.run(["nbdinfo", "--size", self.uri])
        if rc == 0 and out.strip().isdigit():
            size = int(out.strip())
        area = min(self.area_bytes, size) if self.area_bytes and size else (self.area_bytes or size)
        unwritten = None
        if rc == 0:
            rc2, out2, err2 = self.run(["nbdinfo", "--map", self.uri])
            if rc2 == 0:
                try:
                    unwritten = unwritten_bytes(parse_nbdinfo_map(out2), area or 0)
                except ValueError as exc:
                    problems.append(f"nbdinfo --map not understood: {exc}")
            else:
                problems.append(f"nbdinfo --map {self.uri} failed: {(err2.strip().splitlines() or ['exit status ' + str(rc2)])[-1]}")
        elif rc != 127:
            problems.append(f"NBD server {self.uri} not answering before the run: {(err.strip().splitlines() or ['exit status ' + str(rc)])[-1]}")
        self._activity = NbdActivity(uri=self.uri, size_bytes=size, area_bytes=area, unwritten_before_bytes=unwritten, problems=tuple(problems))
        return self

    def __exit__(self, *exc: object) -> None:
        rc, _out, err = self.run(["nbdinfo", "--size", self.uri])
        if rc not in (0, 127):
            last = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
            self._activity = NbdActivity(**{**self._activity.__dict__, "problems": self._activity.problems + (f"NBD server {self.uri} not answering after the run: {last}",)})

    def activity(self) -> BackendActivity:
        return BackendActivity(nbd=self._activity)
