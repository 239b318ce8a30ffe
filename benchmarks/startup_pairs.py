"""Start-up of two or more source trees, paired: ``storbench run``'s exec to its first workload's fio
exec, the trees taking turns sample by sample (the order reversed every other round), so that
each pair sees the same minute of a busy machine.  A difference of 15 ms is lost in the spread
of rounds taken one tree after the other (docs/performance.md, section 2e); it shows here.

    .venv/bin/python benchmarks/startup_pairs.py --samples 20 /tmp/before/src src

Each run is stopped once its first fio has started (see ``walltime.startup_times``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from walltime import OWN_RUNTIME_S, SIZE, startup_times

from _common import bench_env, median, scratch_dir, storbench_argv, warm_bytecode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+", help="source trees (their src folder), put first on PYTHONPATH in turn")
    p.add_argument("--samples", type=int, default=20, help="samples of each tree")
    args = p.parse_args()
    trees = [str(Path(t).resolve()) for t in args.trees]
    for tree in trees:
        warm_bytecode(tree)
    times: dict[str, list[float]] = {t: [] for t in trees}
    with scratch_dir("storbench-bench-startup-") as work:
        target = work / "target"
        target.mkdir()
        argv = [*storbench_argv(), "run", "--suite", "quick", "--size", SIZE, "--runtime", str(OWN_RUNTIME_S),
                "--target", str(target), "--no-report", "--repeat", "1", "--keep-files"]
        for i in range(args.samples):
            for tree in trees if i % 2 == 0 else trees[::-1]:
                env = {**bench_env(work / "startup.sqlite"), "PYTHONPATH": tree}
                times[tree] += startup_times(argv, env, work, samples=1)
    for tree, values in times.items():
        print(f"{tree}: median {median(values) * 1000:.1f} ms ({min(values) * 1000:.1f}-{max(values) * 1000:.1f}), "
              f"{len(values)} samples: " + " ".join(f"{v * 1000:.0f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
