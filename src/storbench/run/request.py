"""What a person asked a run to do (pure): :class:`RunRequest`, built by ``storbench run`` from its
options or read back from a stored run (``--resume``), and handed to :mod:`storbench.run.session`.

Its stored form is the run's metadata (``runs.meta_json``): :meth:`RunRequest.meta` writes it,
:meth:`RunRequest.from_meta` reads it back (a run stored without its plan, or a matrix study's
run, is one clear line).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject

from ..errors import UsageError
from ..model import Overrides, Repeat, Workload, workload_from_meta, workload_to_meta

if TYPE_CHECKING:
    from .inventory import Host


@dataclass(frozen=True)
class RunRequest:
    """Everything a run needs, typed: the workloads, the targets (paths or URIs as given), how
    often each runs, the telemetry asked for, the hosts of a client/server run."""

    workloads: tuple[Workload, ...]
    target_paths: tuple[str, ...]
    overrides: Overrides
    repeat: Repeat
    label: str | None
    suite: str | None
    keep_files: bool = False
    #: False: --no-telemetry (no storage description, device sampling or interval logs)
    telemetry: bool = True
    #: --destroy-data: the exact devices, exports, images or pools writes may destroy
    destroy: tuple[str, ...] = ()
    #: --host/--hosts: the fio servers (empty: a local run)
    hosts: tuple[Host, ...] = ()
    #: --hosts-required: how many hosts must run every workload (None: any one; len(hosts): all)
    hosts_required: int | None = None
    #: --prefill: one sequential write over each target's test area before its workloads
    prefill: bool = False
    #: --ceph-conf, --ceph-client, --ceph-timeout: how rbd: and rados: targets reach their cluster
    ceph_conf: str | None = None
    ceph_client: str | None = None
    ceph_timeout_s: int | None = None
    #: --precondition: SNIA's purge and two sequential writes over each target before its workloads
    precondition: bool = False
    #: --until steady: rounds of every workload until SNIA's steady-state rule holds (stats/steady.py)
    until_steady: bool = False

    @property
    def repetitions(self) -> int:
        """How many times each workload is planned to run (``--until-rse``: its minimum)."""
        return self.repeat.min_runs if self.repeat.until_rse_pct is not None else self.repeat.count

    @property
    def guarded_workloads(self) -> tuple[Workload, ...]:
        """What will write to the targets: the workloads, and the prefill and precondition passes when asked for."""
        from .precondition import PRECONDITION_WORKLOAD
        from .runner import PREFILL_WORKLOAD

        return (tuple(self.workloads) + ((PREFILL_WORKLOAD,) if self.prefill else ())
                + ((PRECONDITION_WORKLOAD,) if self.precondition else ()))  # fmt: skip

    def meta(self) -> JSONObject:
        """The stored form (the run's metadata)."""
        return {
            **({"prefill": True} if self.prefill else {}),
            **({"precondition": True} if self.precondition else {}),
            **({"until": "steady"} if self.until_steady else {}),
            **({"ceph_conf": self.ceph_conf} if self.ceph_conf else {}),
            **({"ceph_client": self.ceph_client} if self.ceph_client else {}),
            **({"ceph_timeout_s": self.ceph_timeout_s} if self.ceph_timeout_s is not None else {}),
            **({"hosts": [h.to_meta() for h in self.hosts]} if self.hosts else {}),
            **({"hosts_required": self.hosts_required} if self.hosts_required is not None else {}),
            "workloads": [workload_to_meta(w) for w in self.workloads],
            "targets": list(self.target_paths),
            "overrides": {"size": self.overrides.size, "runtime": self.overrides.runtime, "extra": [list(e) for e in self.overrides.extra]},
            "repeat": dataclasses.asdict(self.repeat),
            "keep_files": self.keep_files,
            "telemetry": self.telemetry,
            "destroy_data": list(self.destroy),
        }

    @classmethod
    def from_meta(cls, meta: JSONMapping, label: str | None, suite: str | None) -> RunRequest:
        """The request a stored run was made from (``--resume``); one line where it cannot be read."""
        from .inventory import Host

        try:
            ov = meta["overrides"]
            return cls(
                workloads=tuple(workload_from_meta(w) for w in meta["workloads"]),
                target_paths=tuple(meta["targets"]),
                overrides=Overrides(size=ov["size"], runtime=ov["runtime"], extra=tuple((k, v) for k, v in ov.get("extra", []))),
                repeat=Repeat(**meta["repeat"]),
                label=label,
                suite=suite,
                keep_files=bool(meta.get("keep_files")),
                telemetry=bool(meta.get("telemetry", True)),
                destroy=tuple(meta.get("destroy_data", [])),
                hosts=tuple(Host.from_meta(d) for d in meta.get("hosts", [])),
                hosts_required=meta.get("hosts_required"),
                prefill=bool(meta.get("prefill", False)),
                precondition=bool(meta.get("precondition", False)),
                until_steady=meta.get("until") == "steady",
                ceph_conf=meta.get("ceph_conf"),
                ceph_client=meta.get("ceph_client"),
                ceph_timeout_s=meta.get("ceph_timeout_s"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if "setup" in meta or "study" in meta:
                raise UsageError("this run belongs to a matrix study; continue it with 'storbench matrix --resume STUDY'") from None
            raise UsageError(f"this run cannot be resumed: it was stored without its plan ({exc})") from None
