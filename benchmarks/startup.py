"""Start-up, beside bare Python's own in the same run (issue 50): ``storbench --help`` from exec to
exit, and ``storbench run``'s exec to its first workload's fio exec, each the median of 11, next to
``python -c pass`` (the interpreter's floor on this machine at this minute) measured in turns with
them.

Targets: ``--help`` within 0.1 s, the first fio within 0.15 s.

    .venv/bin/python benchmarks/startup.py [--json FILE]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from walltime import OWN_RUNTIME_S, SIZE, startup_times

from _common import Figure, arg_parser, bench_env, emit, median, scratch_dir, storbench_argv, warm_bytecode

SAMPLES = 11


def wall(argv: list[str], env: dict, cwd: Path) -> float:
    """Exec to exit of ``argv`` (its output thrown away); a failure stops the benchmark."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"startup: {' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}")
    return took


def main() -> int:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    warm_bytecode()
    figures = []
    with scratch_dir("storbench-bench-startup-") as work:
        env = bench_env(work / "startup.sqlite")
        python = [sys.executable, "-c", "pass"]
        helps, bare = [], []
        for i in range(SAMPLES):  # in turns: each pair sees the same moment of the machine
            for which in ("help", "python") if i % 2 == 0 else ("python", "help"):
                if which == "help":
                    helps.append(wall([*storbench_argv(), "--help"], env, work))
                else:
                    bare.append(wall(python, env, work))
        target = work / "target"
        target.mkdir()
        argv = [*storbench_argv(), "run", "--suite", "quick", "--size", SIZE, "--runtime", str(OWN_RUNTIME_S),
                "--target", str(target), "--no-report", "--repeat", "1", "--keep-files"]  # fmt: skip
        firsts = startup_times(argv, env, work, samples=SAMPLES)
        bare_after = [wall(python, env, work) for _ in range(SAMPLES)]
    py = median(bare + bare_after)
    print(f"  python -c pass: median {py * 1000:.1f} ms; storbench --help: median {median(helps) * 1000:.1f} ms "
          f"({', '.join(f'{x * 1000:.0f}' for x in helps)}); first fio after exec: median {median(firsts) * 1000:.1f} ms "
          f"({', '.join(f'{x * 1000:.0f}' for x in firsts)})", flush=True)
    figures.append(Figure("startup", "bare Python's start (python -c pass), the floor of both below", py, "", unit=" s",
                          detail=f"median of {len(bare) + len(bare_after)}, in turns with the samples below"))
    figures.append(Figure("startup", "storbench --help, exec to exit", median(helps), "<= 0.1", unit=" s",
                          detail=f"median of {len(helps)} (bare Python {py:.3f} s in the same run): "
                                 + ", ".join(f"{x:.3f}" for x in helps)))  # fmt: skip
    figures.append(Figure("startup", "storbench run: exec to the first workload's fio exec", median(firsts), "<= 0.15", unit=" s",
                          detail=f"median of {len(firsts)} (bare Python {py:.3f} s in the same run): "
                                 + ", ".join(f"{x:.3f}" for x in firsts)))  # fmt: skip
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
