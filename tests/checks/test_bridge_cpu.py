"""The qemu-nbd bridge's CPU around a run (storbench.backend.bridge) and the bridge-cpu-bound
finding (storbench.checks.share): pure, on a recorded /proc/PID/stat line and a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_checks import clean

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.bridge import BridgeActivity, cpu_ticks
from storbench.backend.bridge_sampler import BridgeSampler
from storbench.checks import run_checks

#: /proc/PID/stat of a qemu-nbd bridge on this machine (pid 3121; utime 412, stime 97 ticks)
STAT = ("3121 (qemu-nbd) S 3100 3121 3100 0 -1 4194560 1520 0 0 0 412 97 0 0 20 0 3 0 880123 "
        "1123450880 4567 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n")  # fmt: skip


def test_cpu_ticks_counts_fields_after_the_command_name():
    assert cpu_ticks(STAT) == 412 + 97
    odd = STAT.replace("(qemu-nbd)", "(qemu nbd (x) y)")  # a name with spaces and parentheses
    assert cpu_ticks(odd) == 509
    with pytest.raises(ValueError, match="not a /proc/PID/stat line"):
        cpu_ticks("3121 qemu-nbd S")
    assert cpu_ticks(Path("/proc/self/stat").read_text()) >= 0  # this process's own line reads too


def test_the_sampler_gives_the_bridges_share_of_a_cpu():
    lines = iter([STAT, STAT.replace(" 412 97 ", " 592 117 ")])  # +180 +20 ticks
    clock = iter([10.0, 12.5])
    s = BridgeSampler(3121, read=lambda pid: next(lines), clock=lambda: next(clock), ticks_per_s=100)
    with s:
        pass
    act = s.activity().bridge
    assert act == BridgeActivity(pid=3121, cpu_s=2.0, wall_s=2.5) and act.cpu_share == pytest.approx(0.8)
    gone = BridgeSampler(3121, read=lambda pid: (_ for _ in ()).throw(FileNotFoundError(2, "No such file or directory")))
    with gone:
        pass
    assert gone.activity().bridge.cpu_share is None and "the bridge's CPU could not be read" in gone.activity().bridge.problems[0]
    stored = BackendActivity(bridge=act)
    assert backend_from_dict(backend_to_dict(stored)) == stored


@pytest.mark.parametrize(("cpu_s", "fires"), [(2.4, True), (2.0, False)])
def test_a_busy_bridge_is_said(cpu_s, fires):
    backend = BackendActivity(bridge=BridgeActivity(pid=3121, cpu_s=cpu_s, wall_s=2.5))
    found = [f for f in run_checks(clean(backend=backend)) if f.check == "bridge-cpu-bound"]
    assert bool(found) is fires
    if fires:
        assert "used 96% of a CPU while fio ran (2.40 s of CPU in 2.50 s)" in found[0].message and "?client=fio" in found[0].fix
