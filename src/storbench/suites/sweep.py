"""Pure: parameter sweeps (``--sweep bs=4k,8k,64k``), expanded into workload variants.

Each point of the grid is its own workload named ``<workload>@<key>=<value>[,...]``
(fio accepts that as a job name), carrying the swept option values, so every point
is stored as its own result and a report can draw a curve (one swept option) or a
heatmap (two) over it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from ..errors import SuiteError, UsageError
from ..model import Workload


def parse_sweep(text: str) -> tuple[str, tuple[str, ...]]:
    """``"bs=4k,8k"`` -> ``("bs", ("4k", "8k"))``, checked like a suite file's fio option."""
    from . import validate_extra_options

    key, sep, rest = text.partition("=")
    key = key.strip()
    values = tuple(v.strip() for v in rest.split(",") if v.strip())
    if not sep or not key or not values:
        raise UsageError(f"--sweep {text!r}: use OPTION=V1,V2,... (e.g. bs=4k,8k,64k or iodepth=1,4,16)")
    if len(set(values)) != len(values):
        raise UsageError(f"--sweep {text!r}: a value is given twice")
    from ..jobs.jobfile import SWEEP_VALUE_RE

    for value in values:
        if not SWEEP_VALUE_RE.match(value):
            raise UsageError(f"--sweep {key}: value {value!r} may hold only letters, digits and . _ % : / -")
        try:
            validate_extra_options([(key, value)], label=f"--sweep {key}")
        except SuiteError as exc:
            raise UsageError(str(exc)) from None
    return key, values


def expand(workloads: Sequence[Workload], sweeps: Sequence[tuple[str, tuple[str, ...]]]) -> tuple[Workload, ...]:
    """Every workload at every grid point, in workload order then grid order."""
    if not sweeps:
        return tuple(workloads)
    keys = [k for k, _ in sweeps]
    if len(set(keys)) != len(keys):
        raise UsageError(f"--sweep names an option twice: {', '.join(keys)}")
    out = []
    for workload in workloads:
        for point in itertools.product(*(values for _, values in sweeps)):
            assigned = dict(zip(keys, point))
            options = [(k, assigned.pop(k)) if k in assigned else (k, v) for k, v in workload.options]
            options += list(assigned.items())
            suffix = ",".join(f"{k}={v}" for k, v in zip(keys, point))
            out.append(
                dataclasses.replace(
                    workload,
                    name=f"{workload.name}@{suffix}",
                    description=f"{workload.description} (sweep point {suffix})",
                    options=tuple(options),
                )
            )
    return tuple(out)
