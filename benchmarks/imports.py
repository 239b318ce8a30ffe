"""Import speed: a 10 MB document holding 1,000 fio outputs, 10 MB of 4,000 small outputs, and a directory of 1,000 single-output files.

The document is assembled from real outputs (tests/data and ../shared/fixtures when beside
the project): classic text of fio 2.0 to 3.41 under blog headings with command lines, JSON
documents with a note line before each, terse lines, repeated until it holds 1,000 outputs
and about 10 MB.  The directory holds 1,000 files, each one output (text or JSON).  Each
``storbench import`` runs twice into a fresh database; the figure is the second run
(page cache warm), from start to exit.

The small-output document is copies of one output back to back with no prose, as a log appended
to with ``>>`` holds them (issue 25: it took 17.4 s for 1,000 and did not finish 4,000:
finding each output's section heading scanned the document back to its start).

Targets: each document under 5 s, the directory under 20 s.

    .venv/bin/python benchmarks/imports.py [--json FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Figure, arg_parser, bench_env, emit, run_timed, scratch_dir, storbench_argv, warm_bytecode

SHARED = REPO.parent / "shared" / "fixtures"
DATA = REPO / "tests" / "data"


def outputs() -> tuple[list[str], list[str]]:
    """Real text and JSON outputs to build with."""
    texts = [p.read_text(errors="replace") for p in sorted((SHARED / "fio-text").glob("seed000-*.txt"))]
    texts += [p.read_text(errors="replace") for p in sorted((SHARED / "fio-text" / "public").glob("[0-9]*.txt"))]
    jsons = [p.read_text() for p in sorted((SHARED / "fio-json").glob("[a-j]_*.json")) if '"jobs"' in p.read_text()]
    if not texts or not jsons:  # without ../shared: the project's own recorded outputs
        texts = texts or [p.read_text(errors="replace") for p in sorted(DATA.rglob("*.txt")) if "(groupid=" in p.read_text(errors="replace")]
        jsons = jsons or [p.read_text() for p in sorted(DATA.rglob("*.json")) if '"fio version"' in p.read_text()]
    return texts, jsons


def document(texts: list[str], jsons: list[str], n: int = 1000, size: int = 10_000_000) -> str:
    parts: list[str] = []
    total = count = 0
    i = 0
    while count < n:
        if i % 3 == 2:
            body = jsons[i % len(jsons)]
            parts.append(f"\nRun {i} (JSON, see the note above):\n{body}\n")
        else:
            body = texts[i % len(texts)]
            parts.append(f"\n## Test {i}\n\n$ fio --name=t{i} --rw=randread --bs=4k --size=1g\n{body}\n")
        total += len(parts[-1])
        count += 1
        i += 1
    filler = max(0, size - total) // n  # prose between outputs, up to the size asked
    sentence = "The figures above are from the same machine; nothing else ran. "
    para = (sentence * (filler // len(sentence) + 1))[:filler]
    return "".join(p + para + "\n" for p in parts)


def main() -> int:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    warm_bytecode()
    texts, jsons = outputs()
    figures = []
    sb = storbench_argv()
    with scratch_dir("storbench-bench-import-") as work:
        doc = work / "post.txt"
        doc.write_text(document(texts, jsons))
        # copies of one classic-text output of 2.5-3 KB (as issue 25 measured): about 3,500 in 10 MB
        one = min((t for t in texts if 2500 <= len(t) <= 3000), key=len, default=texts[0])
        log = work / "appended.log"
        blocks, size = [], 0
        while size < 10_000_000:
            blocks.append(one)
            size += len(one) + 2
        log.write_text("\n\n".join(blocks))
        folder = work / "outputs"
        folder.mkdir()
        for i in range(1000):
            body = jsons[i % len(jsons)] if i % 2 else texts[i % len(texts)]
            (folder / f"out-{i:04d}.{'json' if i % 2 else 'txt'}").write_text(body)
        for name, argv, target, what in (
            ("document", [*sb, "import", str(doc)], "<= 5.0", f"{doc.stat().st_size / 1e6:.1f} MB, 1,000 outputs"),
            ("log of small outputs", [*sb, "import", str(log)], "<= 5.0",
             f"{log.stat().st_size / 1e6:.1f} MB, {len(blocks):,} outputs"),
            ("directory", [*sb, "import", str(folder)], "<= 20.0", "1,000 files of one output each"),
        ):
            times = []
            for attempt in range(2):
                db = work / f"{name}-{attempt}.sqlite"
                t = run_timed(argv, env=bench_env(db), cwd=work)
                times.append(t)
            t = times[-1]
            expected = len(blocks) if name.startswith("log") else 1000
            ok = t.returncode == 0 and f"{expected} result(s)" in t.stdout
            detail = f"{what}; peak RSS {t.maxrss_bytes / 2**20:,.0f} MiB" + ("" if ok else f"; exit {t.returncode}: {(t.stderr or t.stdout)[-300:]}")
            print(f"  storbench import ({name}): {t.wall_s:.2f} s, {detail}", flush=True)
            figures.append(Figure("imports", f"storbench import of a {name} ({what})", t.wall_s if ok else None, target, detail, " s"))
    emit(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
