"""``storbench import``: every fio output in files and whole documents, into the store, and the
application loads' outputs among them (pgbench, dbench, fs_mark, sysbench fileio).

A file may be one fio output (JSON, json+, terse or classic text) or a document that holds
many among other text: a blog post, a mail (quoted with ``> ``, wrapped at 72 columns), a log
appended to with ``>>``, a saved HTML page.  Each output becomes a result of one run, in
document order (:mod:`storbench.documents`), with what the document says about it: the fio
command line printed before it (its options become the result's), the heading it is under,
the host of a shell prompt.  ``--label-from`` chooses what names each result, ``--group-by
heading`` makes each heading a configuration of its own, so that ``storbench compare`` lines
a whole published study up (ext4 vs xfs vs zfs per workload).

Every file is read and checked first: a file in which nothing is fio output is an error and
nothing is stored.  Fragments that look like fio's but hold no result, and lines inside an
output that are not fio's, are named with their line numbers.
"""

from __future__ import annotations

import contextlib
import os

import click

from ..errors import FioParseError, UsageError
from ..record import ResultRecord
from .common import App, pass_app, print_json, public_records

#: more results than this and import names the workloads instead of printing the whole table
TABLE_MAX_RESULTS = 60
#: the file PTS writes each result as (~/.phoronix-test-suite/test-results/NAME/composite.xml)
PTS_FILE = "composite.xml"


def _plan_pts(path: str, text: str) -> tuple[list[dict], list[str], dict]:
    """A Phoronix Test Suite result file: one result per system, workload and trial (:mod:`storbench.pts`)."""
    from ..pts import map_result_file, parse_result_file

    pts = parse_result_file(text)
    mapped = map_result_file(pts)
    name = os.path.basename(path)
    if not mapped.records:
        reasons = "; ".join(mapped.said) or "it holds no result"
        raise FioParseError(f"a Phoronix Test Suite result file with no figure storbench can import: {reasons}")
    source = os.path.abspath(path)
    plans = [
        {"workload": r.workload, "fio": r.fio, "raw_output": r.raw_output, "source": f"{source}#{r.system}",
         "options": dict(r.options), "target": r.system, "label": None, "repetition": r.repetition,
         "meta": {"system": r.system, "workload": r.workload, "repetition": r.repetition, "kind": "pts"}}
        for r in mapped.records
    ]  # fmt: skip
    said = [f"{name}: {line}" for line in mapped.said]
    said += [f"{name}: system {s!r} has no result storbench can import" for s in mapped.systems_without_results]
    info = {
        "source": source, "title": pts.title, "description": pts.description, "test_client": pts.test_client,
        "last_modified": pts.last_modified,
        "systems": [
            {"identifier": s.identifier, "hardware": dict(s.hardware), "software": dict(s.software), "user": s.user,
             "timestamp": s.timestamp, "client_version": s.client_version, "notes": s.notes,
             "attributes": dict(s.attributes)}
            for s in pts.systems
        ],
        "workloads": [w.to_meta() for w in mapped.workloads],
    }  # fmt: skip
    return plans, said, info


def _plan(path: str, text: str, label_from: str, group_by: str) -> tuple[list[dict], list[str]]:
    """The results one file gives (as keyword dicts for :class:`ResultRecord`), and the lines to say about it."""
    from ..documents import read_document
    from ..fio import parse_output

    source = os.path.abspath(path)
    name = os.path.basename(path)
    load_plans, load_said, text = _plan_loads(name, source, text, label_from, group_by)
    doc = read_document(text)
    if not doc.found and (load_plans or load_said):
        return load_plans, load_said
    if not doc.found:
        result = parse_output(text)  # the error a file with no fio output has always given, or what the splitter missed
        return [{"workload": result.jobs[0].name if result.jobs else name, "fio": result, "raw_output": text, "source": source,
                 "options": dict(result.jobs[0].options) if result.jobs else {}, "meta": {"line": 1}}], []  # fmt: skip
    said: list[str] = list(load_said)
    plans: list[dict] = list(load_plans)
    _refuse_cut_outputs(text, doc)
    single = len(doc.found) == 1 and not doc.skipped
    for f in doc.found:
        result = f.result  # one code path: a paste on its own is rejoined (wrapped lines) as inside a document
        job = result.jobs[0] if result.jobs else None
        options: dict = {}
        if f.context.command is not None:
            options.update({k: v for k, v in f.context.command.options})
        if job is not None:
            options.update(dict(job.options))
        label = f.label(label_from) if f.context.heading or f.context.command else None  # else the run's label
        plans.append({
            "workload": (job.name if job is not None else None) or name,
            "fio": result,
            "raw_output": text if single else f.output.text,
            "source": source if single else f"{source}:{f.output.first_line}",
            "options": options,
            "job_text": f.context.command.text if f.context.command else None,
            "label": label,
            "target": (f.context.heading or None) if group_by == "heading" else None,
            "meta": {
                "line": f.output.first_line, "last_line": f.output.last_line, "kind": f.output.kind,
                "heading": f.context.heading, "command": f.context.command.text if f.context.command else None,
                "host": f.context.command.host if f.context.command else None,
                "unread": [{"line": n, "text": t} for n, t in f.output.unread],
                # a summary's quote of a direction line (and its latency) without fio's job header
                **({"fragment": True} if _fragment(f.output) else {}),
            },
        })  # fmt: skip
        for n, t in f.output.unread:
            said.append(f"{name}: line {n} (in the output at line {f.output.first_line}) not read: {t[:80]!r}")
    repeats = [pl for pl in plans if pl["meta"].get("fragment") and _repeats_a_full_output(pl, plans)]
    if repeats:
        lines = ", ".join(str(pl["meta"]["line"]) for pl in repeats)
        said.append(f"{name}: {len(repeats)} summary line{'s repeat outputs' if len(repeats) != 1 else ' repeats an output'} found in full "
                    f"in the same document (line{'s' if len(repeats) != 1 else ''} {lines}): not stored twice")  # fmt: skip
        plans = [pl for pl in plans if not any(pl is r for r in repeats)]
    fragments = [pl for pl in plans if pl["meta"].get("fragment")]
    if fragments:
        said.append(f"{name}: {len(fragments)} summary fragment{'s' if len(fragments) != 1 else ''} (a direction line "
                    "without fio's job header, each under its own label): stored with the figures it quotes, no job options")  # fmt: skip
    for s in doc.skipped:
        where = f"line {s.first_line}" if s.first_line == s.last_line else f"lines {s.first_line}-{s.last_line}"
        said.append(f"{name}: {where} skipped: {s.reason}")
    plans.sort(key=lambda pl: pl["meta"].get("line") or 0)
    return plans, said


def _plan_loads(name: str, source: str, text: str, label_from: str, group_by: str) -> tuple[list[dict], list[str], str]:
    """The application loads' outputs of a document (pgbench, dbench, fs_mark, sysbench fileio:
    :mod:`storbench.documents.loads`), each a result of that load named as storbench's suites name
    it; the lines to say (what each lacks, what could not be read); and the text with their lines
    blanked for fio's reader (sysbench 1.1's "read: IOPS=" would read as a fio fragment)."""
    from ..documents.loads import find_load_outputs, load_line_numbers
    from ..loads import tool, tool_names
    from ..model import FioResult

    found, skipped = find_load_outputs(text, {n: tool(n).pasted for n in tool_names()})
    plans: list[dict] = []
    said: list[str] = []
    for f in found:
        settings = dict(f.pasted.settings)
        plans.append({
            "workload": f.pasted.workload,
            "fio": FioResult(fio_version=None, jobs=(), format=f.tool, global_options=settings, measures=f.pasted.measures),
            "raw_output": f.text, "source": f"{source}:{f.first_line}", "options": settings,
            "label": f.heading if label_from != "none" else None,
            "target": f.heading if group_by == "heading" else None,
            "meta": {"line": f.first_line, "last_line": f.last_line, "kind": "load", "tool": f.tool, "heading": f.heading,
                     "absent": list(f.pasted.absent)},
        })  # fmt: skip
        for what in f.pasted.absent:
            said.append(f"{name}: the {f.tool} output at line {f.first_line} ({f.pasted.workload}) has no {what}: left out, not made up")
    for sk in skipped:
        said.append(f"{name}: lines {sk.first_line}-{sk.last_line} skipped: {sk.tool} output storbench cannot read: {sk.reason}")
    taken = load_line_numbers(found, skipped)
    if taken:  # numbered as the document's lines are (a lone CR ends one too)
        from ..documents.source import split_lines

        text = "\n".join("" if i in taken else ln for i, ln in enumerate(split_lines(text), 1))
    return plans, said, text


def _same_figures(a, b) -> bool:
    """Every direction of result ``a`` is in ``b`` with the same IOPS and bandwidth (as printed: within 0.5%)."""
    from ..metrics import direction_figures

    fa, fb = direction_figures(a), direction_figures(b)
    if not fa or not set(fa) <= set(fb):
        return False
    for direction, figures in fa.items():
        for key in ("iops", "bw_bytes"):
            x, y = figures.get(key), fb[direction].get(key)
            if x is None or y is None or abs(x - y) > 0.005 * max(abs(x), abs(y), 1e-9):
                return False
    return True


def _repeats_a_full_output(fragment: dict, plans: list[dict]) -> bool:
    """A summary fragment whose figures are those of a full output of the same document (a
    summary quoting the results shown in full above or below it)."""
    return any(not pl["meta"].get("fragment") and _same_figures(fragment["fio"], pl["fio"]) for pl in plans)


def _fragment(output) -> bool:
    """A summary's quote of fio's direction line (with its latency lines at most): no job header,
    no percentiles, no cpu or depth lines."""
    import re

    return output.kind == "text" and not re.search(r"\(groupid=|percentiles|^\s*cpu\s*:|IO depths", output.text, re.M)


def _refuse_cut_outputs(text: str, doc) -> None:
    """A direction line cut or mangled inside an output or right after it (a paste that ends at
    ``write: IOPS``), or the first line after an output cut inside its label (``write: IO``,
    ``lat (u``, ``clat perc``): the output is incomplete, and storing the rest would drop what
    followed silently; one line naming the line."""
    from ..fio.text import cut_line, mangled_direction

    lines = text.splitlines()
    for f in doc.found:
        for number in range(f.output.first_line, min(len(lines), f.output.last_line + 3) + 1):
            direction = mangled_direction(lines[number - 1])
            if direction is not None:
                raise FioParseError(
                    f"line {number}: the {direction} line of the output at line {f.output.first_line} is cut or holds a "
                    f"figure that is not a number ({lines[number - 1].strip()[:60]!r}): the output is incomplete; nothing imported"
                )
        after = next((n for n in range(f.output.last_line + 1, min(len(lines), f.output.last_line + 3) + 1) if lines[n - 1].strip()), None)
        if after is not None and (why := cut_line(lines[after - 1])):
            raise FioParseError(f"line {after}: the output at line {f.output.first_line} is cut: {why}; nothing imported")


def _refuse_impossible(plans: list[dict]) -> None:
    """A figure no storage can have (negative, not finite, beyond any device, bandwidth that
    contradicts IOPS): one line naming the output's line, and nothing of the file is stored."""
    import math

    from ..fio.validate import result_problems

    for plan in plans:
        if plan["meta"].get("kind") == "load":  # another benchmark's figures: each a finite, non-negative number
            bad = next((m for m in plan["fio"].measures if not math.isfinite(m.value) or m.value < 0), None)
            if bad is not None:
                raise FioParseError(f"the {plan['meta']['tool']} output at line {plan['meta']['line']}: {bad.unit} {bad.value!r} "
                                    "is not a figure a load can have; nothing imported")  # fmt: skip
            continue
        if plan["meta"].get("kind") == "pts":  # figures of another benchmark, checked by its mapping
            continue
        problems = result_problems(plan["fio"])
        if problems:
            line = plan["meta"].get("line")
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            where = f"the output at line {line}: " if line and line != 1 else ""
            raise FioParseError(f"{where}{problems[0]}{more}; nothing imported")


def _files(paths) -> list[str]:
    """The files to read: each path given, and for a directory every regular file in it (not
    hidden, in name order).  A Phoronix Test Suite result directory (one holding
    ``composite.xml``) gives only that file; a directory of them (``test-results/``) gives
    each subdirectory's ``composite.xml``."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            if os.path.isfile(os.path.join(path, PTS_FILE)):
                out.append(os.path.join(path, PTS_FILE))
                continue
            entries = sorted(n for n in os.listdir(path) if not n.startswith("."))
            names = []
            for n in entries:
                full = os.path.join(path, n)
                if os.path.isfile(full):
                    names.append(n)
                elif os.path.isdir(full) and os.path.isfile(os.path.join(full, PTS_FILE)):
                    names.append(os.path.join(n, PTS_FILE))
            if not names:
                raise UsageError(f"{path}: the directory holds no files to import")
            out.extend(os.path.join(path, n) for n in names)
        else:
            out.append(path)
    return out


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--label", metavar="TEXT", help="Name the imported run.")
@click.option("--label-from", type=click.Choice(["heading", "command", "none"]), default="heading", show_default=True,
              help="What names each result of a document: the heading it is under (else its job name), its command line's --name, or nothing.")  # fmt: skip
@click.option("--group-by", type=click.Choice(["none", "heading"]), default="none", show_default=True,
              help="heading: the outputs under one heading form one configuration (for storbench compare).")
@click.option("--json", "as_json", is_flag=True, help="Print the imported records as JSON.")
@pass_app
def import_(app: App, paths, label, label_from, group_by, as_json):
    """Import fio outputs into the store: single output files, every output in a document
    (a post, a mail, a log, a saved page), or every file of a directory.

    Every file is read and checked first; if one holds no fio output, nothing is stored.
    """
    import gc

    # thousands of small frozen records are made and none of them forms a cycle: the cyclic
    # collector's passes over the growing heap were about 6% of a 10 MB import
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _import(app, paths, label, label_from, group_by, as_json)
    finally:
        if was_enabled:
            gc.enable()


def _import(app: App, paths, label, label_from, group_by, as_json) -> None:
    from ..pts import looks_like_pts

    planned: list[tuple[str, list[dict], list[str]]] = []
    pts_files: list[dict] = []
    paths = _files(paths)
    for path in paths:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from None
        text = data.decode("utf-8", errors="replace")
        try:
            if looks_like_pts(text):
                plans, said, info = _plan_pts(path, text)
                pts_files.append(info)
            else:
                plans, said = _plan(path, text, label_from, group_by)
            _refuse_impossible(plans)
        except FioParseError as exc:
            raise FioParseError(f"{path}: {exc}") from None
        planned.append((path, plans, said))
    if label is None and len(pts_files) == 1 and len(paths) == 1 and pts_files[0]["title"]:
        label = pts_files[0]["title"]  # a PTS result is known by its title

    with contextlib.closing(app.open_store()) as store:
        meta = {"sources": [os.path.abspath(p) for p in paths],
                "outputs": [{"source": os.path.abspath(p), **pl["meta"]} for p, plans, _ in planned for pl in plans
                            if pl["meta"].get("kind") != "pts"]}  # fmt: skip
        if pts_files:
            meta["pts"] = pts_files
        run_id = store.create_run(label=label, kind="import", meta=meta)
        try:
            now = app.env.clock()
            ids = store.add_results([
                ResultRecord(
                    run_id=run_id, workload=pl["workload"], target=pl.get("target"), fio=pl["fio"],
                    raw_output=pl["raw_output"], label=pl.get("label") or label, source=pl["source"],
                    options=pl["options"], job_text=pl.get("job_text"), created_at=now,
                    repetition=pl.get("repetition", 0),
                )
                for _path, plans, _said in planned for pl in plans
            ])  # fmt: skip
        except BaseException:
            store.finish_run(run_id, "incomplete", reason="import interrupted")
            raise
        store.finish_run(run_id, "complete")
        # read back only what is shown whole (the JSON, a small table): a large import names its workloads
        records = store.results(run_id) if as_json or len(ids) <= TABLE_MAX_RESULTS else None
    for path, plans, said in planned:
        if plans and plans[0]["meta"].get("kind") == "pts":
            systems = len({pl["target"] for pl in plans})
            workloads = len({pl["workload"] for pl in plans})
            app.err(f"{os.path.basename(path)}: Phoronix Test Suite result, {systems} system(s) x {workloads} workload(s) "
                    f"-> run {run_id} ({len(plans)} result{'s' if len(plans) != 1 else ''}, one per run of each test)")  # fmt: skip
        elif len(plans) > 1 or said:
            loads = sum(1 for pl in plans if pl["meta"].get("kind") == "load")
            fio = len(plans) - loads
            what = f"{fio} fio output{'s' if fio != 1 else ''}" + (f" and {loads} application load output{'s' if loads != 1 else ''}" if loads else "")
            app.err(f"{os.path.basename(path)}: {what} -> run {run_id} ({len(plans)} result{'s' if len(plans) != 1 else ''})")
        for line in said:
            app.err(line)
    if as_json:
        assert records is not None  # read back whole for --json
        print_json(app, public_records(records))
    else:
        from ..render.terminal import format_results_table

        if records is not None:
            app.console().print(format_results_table(records, title=f"run {run_id} (import)"))
        else:
            names = sorted({pl["workload"] for _p, plans, _s in planned for pl in plans})
            app.out(f"{len(names)} workload(s): {', '.join(names[:8])}{', ...' if len(names) > 8 else ''} "
                    f"(storbench show {run_id} for the table)")  # fmt: skip
        app.out(f"imported {len(ids)} result(s) from {len(paths)} file(s) into {app.db_url} as run {run_id}")
