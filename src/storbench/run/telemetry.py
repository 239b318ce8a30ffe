"""What storbench records around each fio run besides fio's own output (:class:`Telemetry`): the
storage description, the devices' sampler, the back-ends' sampler and the network ceilings;
:class:`SystemTelemetry` is the real one, :class:`NoTelemetry` records nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..backend import BackendSampler
    from ..model import Target
    from ..net import CeilingLookup, NetCeiling
    from ..storage import StorageInfo
    from .devices import ActivitySampler


class Telemetry(Protocol):
    """What storbench records around each fio run besides fio's own output: every sampler it
    hands out is declared here (the runner asks for each by name, never through getattr)."""

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None: ...

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]: ...

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None: ...  # fmt: skip

    @property
    def net_ceilings(self) -> CeilingLookup | None: ...


class NoTelemetry:
    """Telemetry that records nothing (client runs, --no-telemetry, tests); a base for partial ones."""

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        return None

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        return contextlib.nullcontext(None)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        return None

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        return None


class DescribeOnce(NoTelemetry):
    """Telemetry that describes each target once (curve steps and steady-state rounds each call
    :func:`execute`, which would describe the target again every time); the rest is ``inner``'s."""

    def __init__(self, inner: Telemetry) -> None:
        self.inner = inner
        self.cache: dict[str, StorageInfo | None] = {}

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        if target.path not in self.cache:
            self.cache[target.path] = self.inner.describe(target, fio_version)
        return self.cache[target.path]

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        return self.inner.sampler(storage)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        return self.inner.backend_sampler(storage, target, area_bytes)

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        return self.inner.net_ceilings


class SystemTelemetry(NoTelemetry):
    """The real thing: storage description (findmnt, lsblk, /sys) and /proc/diskstats sampling."""

    def __init__(self, interval_s: float = 1.0, net_ceiling_of: Callable[[str], NetCeiling | None] | None = None) -> None:
        self.interval_s = interval_s
        #: ``Store.last_net_ceiling``: what ``storbench net`` measured towards a server, for the share-ceiling check
        self.net_ceiling_of = net_ceiling_of
        self._net_ceilings: CeilingLookup | None = None

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        """``server -> bits/s`` over :attr:`net_ceiling_of`, made on first use (after the first fio:
        a run that meets no network share never imports :mod:`storbench.net`); None without it."""
        if self._net_ceilings is None and self.net_ceiling_of is not None:
            from ..net import CeilingLookup

            self._net_ceilings = CeilingLookup(self.net_ceiling_of)
        return self._net_ceilings

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        from ..targets import kind_of

        return kind_of(target).describe(target, fio_version)

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        from .devices import ActivitySampler

        devices = [d.kname or d.name for d in storage.devices] if storage is not None else []
        return ActivitySampler(devices, interval_s=self.interval_s)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        """What the back-ends under the target (a ZFS pool, an NBD export) report around the run; None: nothing to read."""
        from ..backend import sampler_for

        return sampler_for(storage, target, area_bytes)
