"""``storbench compare``: runs side by side, with Welch's t-test verdicts and a regression gate."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence

import click
from rich.console import Console

from ..errors import RegressionError, UsageError
from ..metrics import headlines_of
from ..record import ResultRecord
from .common import App, pass_app, resolve_runs

SINGLE_RUN_NOTE = "with single runs no significance can be claimed; use --repeat 3 or more"


def _run_ids(store, run_refs: Sequence[str], label_prefix: str | None) -> list[int]:
    ids = resolve_runs(store, run_refs) if run_refs else []
    if label_prefix is not None:
        found = store.list_runs(label_prefix=label_prefix)
        if not found:
            raise UsageError(f"no run has a label starting with {label_prefix!r} (see 'storbench list')")
        ids.extend(sorted(r.run_id for r in found))
    if not ids:
        raise UsageError("give the runs to compare (run ids, labels or 'last') or --label-prefix")
    return list(dict.fromkeys(ids))


def _baseline_key(store, groups, ref: str) -> str:
    """A configuration key from what the user typed: a key, a name, or a run id / label / 'last'."""
    configs = [c for c, _ in groups]
    for attr in ("key", "name"):
        matches = [c for c in configs if getattr(c, attr) == ref]
        if len(matches) == 1:
            return matches[0].key
    if ref == "last":
        newest = store.list_runs(limit=1)
        run_ids = {newest[0].run_id} if newest else set()
    else:
        run_ids = set(store.find_runs(ref))
    matches = [c for c in configs if run_ids & set(c.run_ids)]
    names = ", ".join(repr(c.name) for c in configs)
    if not matches:
        raise UsageError(f"unknown baseline {ref!r}: give one of {names} (or a run id among them)")
    if len(matches) > 1:
        several = ", ".join(repr(c.name) for c in matches)
        raise UsageError(f"baseline {ref!r} names several configurations ({several}): give one of them")
    return matches[0].key


def _captured_references(store, ids: Sequence[int], metas, records: Sequence[ResultRecord]) -> list[ResultRecord]:
    """For every replay among the runs compared, its trace's own figures as a result of their own
    (a configuration "captured: LABEL", one sample; :mod:`storbench.trace.reference`), so that the
    source stands beside its candidates.  A trace no longer stored is left out."""
    from ..trace.reference import reference_result
    from ..trace.rows import TraceRow

    replays: dict[str, dict] = {}
    for rid in ids:
        for w in metas[rid].get("workloads") or []:
            ref = w.get("replay") if isinstance(w, dict) else None
            if isinstance(ref, dict) and isinstance(ref.get("trace_id"), int) and w.get("name"):
                replays.setdefault(w["name"], ref)
    out: list[ResultRecord] = []
    rows: dict[int, TraceRow | None] = {}
    for workload, ref in replays.items():
        first = next((r for r in records if r.workload == workload), None)
        trace_id = ref["trace_id"]
        if first is None:
            continue
        if trace_id not in rows:
            try:
                rows[trace_id] = store.find_trace(str(trace_id))
            except UsageError:
                rows[trace_id] = None
        row = rows[trace_id]
        if row is None:
            continue
        out.append(ResultRecord(
            run_id=-trace_id, workload=workload, target=row.device or f"trace {trace_id}", label=f"captured: {row.label}",
            fio=reference_result(row.figures, tuple(k for k in ref.get("kinds", ("read", "write", "trim")) if k != "flush")),
            raw_output="", options=dict(first.options), repetition=0,
        ))  # fmt: skip
    return out


def _headlines(records: Sequence[ResultRecord]) -> dict[str, str]:
    """Each workload's headline metric, judged from the options it ran with."""
    return headlines_of(records)


def _has_single_runs(cmp) -> bool:
    """Some run compared ran once (a trace's captured reference is one sample by nature: not counted)."""
    captured = {c.key for c in cmp.configs if all(rid < 0 for rid in c.run_ids)}
    return any(cell is not None and cell.summary.n < 2 and cell.config not in captured for row in cmp.rows for cell in row.cells)


def _regression_message(cmp, found) -> str:
    from ..compare import format_p

    base = cmp.config(cmp.baseline).name
    parts = []
    for r in found:
        p = ""
        if r.p_value is not None:
            shown = format_p(r.p_value, cmp.alpha)
            p = f" (p{shown})" if shown.startswith("<") else f" (p={shown})"
        parts.append(f"{r.workload} {r.direction} {r.metric} {r.lead_pct:+.1f}%{p} in {cmp.config(r.config).name!r} vs {base!r}")
    return "regression: " + "; ".join(parts)


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1)
@click.option("--label-prefix", metavar="TEXT", help="Also compare every run whose label starts with TEXT.")
@click.option("--baseline", metavar="RUN", help="The configuration the others are compared with: a run id or label, or a column name (default: the first).")
@click.option("--fail-if-worse", "fail_pct", type=click.FloatRange(min=0), metavar="PCT", help="Exit with code 3 when the baseline significantly leads a configuration by more than PCT percent (compare's one convention: the faster's lead as a percentage of the slower's figure; never on single runs).")
@click.option("--gate-metric", "gate_metrics", multiple=True, type=click.Choice(["iops", "bw_bytes", "lat_mean_ns", "clat_p99_ns"]), help="With --fail-if-worse: judge only this metric (repeatable; default: all four).")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print a GitHub Markdown table.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV, one line per row and configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--se", "pts_se", is_flag=True, help="The terminal table gives each figure as the Phoronix Test Suite does: mean, SE ± the standard error, N runs.")
@click.option("--all-metrics", is_flag=True, help="The terminal table shows every metric of every workload (default: the one each workload is judged by; --markdown, --csv and --json always have all).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to FILE instead of stdout.")
@pass_app
def compare(app: App, run_refs, label_prefix, baseline, fail_pct, gate_metrics, as_markdown, as_csv, as_json, pts_se, all_metrics, output):
    """Compare runs (ids, labels or 'last') workload by workload, with Welch's t-test.

    Each run is one configuration; a run with several targets gives one per target.
    Figures are mean ± sd over repetitions; a difference is called better or worse
    only when it is significant (p < 0.05), and never with single runs.
    """
    from .. import compare as cmp_mod
    from ..render import compare as view

    if sum((as_markdown, as_csv, as_json)) > 1:
        raise UsageError("give only one of --markdown, --csv and --json")
    if gate_metrics and fail_pct is None:
        raise UsageError("--gate-metric goes with --fail-if-worse PCT")
    with contextlib.closing(app.open_store()) as store:
        ids = _run_ids(store, run_refs, label_prefix)
        run_names: dict[int, str] = {}
        records: list[ResultRecord] = []
        empty: list[int] = []
        infos, found_of, metas = store.get_runs(ids), store.results_of(ids), store.run_metas(ids)
        # imports compared with storbench's own runs are marked (their n and spread are the file's)
        mixed = len({infos[rid].kind == "import" for rid in ids}) > 1
        for rid in ids:
            run_names[rid] = (infos[rid].label or f"run {rid}") + (", imported" if mixed and infos[rid].kind == "import" else "")
            found = found_of[rid]
            if not found:
                empty.append(rid)
            records.extend(found)
        systems_of: dict[tuple[int, str], dict] = {}  # (run, PTS system) -> its description
        curves: list[dict] = []  # storbench curve / matrix --curve: every curve of the runs compared
        for rid in ids:
            meta = metas[rid]
            curves.extend((meta.get("curve_result") or {}).get("curves", []))
            for f in meta.get("pts") or []:
                for s in f.get("systems", []):
                    systems_of.setdefault((rid, s["identifier"]), s)
        references = _captured_references(store, ids, metas, records)
        for rec in references:
            run_names[rec.run_id] = rec.label or "captured"
        records.extend(references)
        groups = cmp_mod.configurations(records, run_names)
        if len(groups) < 2:
            have = ", ".join(repr(c.name) for c, _ in groups) or "none"
            left_out = f"; run(s) without results: {', '.join(map(str, empty))}" if empty else ""
            raise UsageError(
                f"compare needs at least two configurations (two runs, or one run with several targets), "
                f"got {len(groups)}: {have}{left_out}"
            )
        base_key = _baseline_key(store, groups, baseline) if baseline is not None else None
    for rid in empty:
        app.err(f"run {rid} has no results; left out")

    cmp = cmp_mod.compare(groups, base_key)
    heads = _headlines(records)
    sentences = cmp_mod.summary_sentences(cmp, heads)
    by_config = {c.key: list(members) for c, members in groups}
    verdicts = cmp_mod.verdict_lines(cmp, heads, cmp_mod.finding_caveats(by_config))
    unlike = [d for d in cmp_mod.config_differences(cmp, by_config) if not d.variable]
    variables = [d for d in cmp_mod.config_differences(cmp, by_config) if d.variable]
    notes: list[str] = []
    if not any(sum(c is not None for c in row.cells) >= 2 for row in cmp.rows):
        notes.append("no workload was measured in more than one configuration: nothing to compare (workload names must match)")
    if _has_single_runs(cmp):
        notes.append(SINGLE_RUN_NOTE)
    from ..curve.model import side_by_side

    if iso := side_by_side(curves):
        notes.append(iso)
    from ..render.terminal import format_system_differences

    described = [(c.name, systems_of[(c.run_ids[0], c.target or "")]) for c in cmp.configs
                 if (c.run_ids[0], c.target or "") in systems_of]  # fmt: skip
    notes.extend(format_system_differences(described))
    names = [c.name for c in cmp.configs]
    shown = [d for d in variables if all(v != "-" for v in d.values)][:3] or variables[:3]  # the fields every side has first
    what_differs = [f"{d.field}: " + " / ".join(f"{v} ({n})" for v, n in zip(d.values, names)) for d in shown]
    if len(variables) > len(shown):
        what_differs.append(f"and {len(variables) - len(shown)} more setting(s) (storbench compare --json lists them)")
    warnings = [
        f"not like for like: {d.field}" + (f" of {d.workload}" if d.workload else "") + ": "
        + " / ".join(f"{v} ({n})" for v, n in zip(d.values, names))
        for d in unlike
    ]  # fmt: skip
    regressed: tuple = ()
    if fail_pct is not None:
        regressed = cmp_mod.regressions(cmp, fail_pct, gate_metrics or None)
        base_name = cmp.config(cmp.baseline).name
        if _has_single_runs(cmp):
            notes.append("--fail-if-worse: rows with a single run cannot fail the gate (no significance with n=1)")
        if not regressed:
            notes.append(f"--fail-if-worse {fail_pct:g}%: nothing is significantly worse than {base_name!r} by more than {fail_pct:g}%")

    if as_json:
        data = view.compare_to_json(cmp)
        data["summary"] = sentences
        data["verdicts"] = verdicts
        data["differences"] = [{"field": d.field, "values": dict(zip([c.key for c in cmp.configs], d.values)),
                                "variable": d.variable, "workload": d.workload}
                               for d in cmp_mod.config_differences(cmp, by_config)]  # fmt: skip
        data["notes"] = notes
        if fail_pct is not None:
            data["fail_if_worse_pct"] = fail_pct
            data["regressions"] = [
                {"workload": r.workload, "direction": r.direction, "metric": r.metric, "config": r.config,
                 "rel_diff_pct": r.rel_diff_pct, "lead_pct": r.lead_pct, "p_value": r.p_value}
                for r in regressed
            ]
        text = json.dumps(data, indent=2, allow_nan=False, default=str) + "\n"
    elif as_csv:
        text = view.format_compare_csv(cmp)
        for note in notes:
            app.err(note)
    elif as_markdown:
        text = view.format_compare_markdown(cmp)
        if verdicts:
            text = "".join(f"- **{md_line}**\n" for md_line in verdicts) + "\n" + text
        if warnings:
            text += "\n" + "".join(f"- {w}\n" for w in warnings)
        if sentences:
            text += "\n" + "".join(f"- {s}\n" for s in sentences)
        if notes:
            text += "\n" + "".join(f"{n}\n" for n in notes)
    else:
        text = None  # the rich table, printed below

    if text is None:
        if output:
            buf = io.StringIO()
            console = Console(file=buf, width=120, force_terminal=False, highlight=False, no_color=True)
        else:
            console = app.console(width=120)
        for line in verdicts:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        if what_differs:
            console.print("the configurations differ in (the study's variable): " + "; ".join(what_differs), markup=False, highlight=False, soft_wrap=True)
        for line in warnings:
            console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)
        console.print("")
        rows = None if all_metrics else cmp_mod.headline_rows(cmp, heads)
        console.print(view.format_compare_table(cmp, rows, se=pts_se))
        if notes:
            console.print("")
        for line in notes:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        if output:
            _write(output, buf.getvalue())
    elif output:
        _write(output, text)
    else:
        app.env.stdout.write(text)
    if output:
        app.err(f"wrote the comparison to {output}")

    if regressed:
        raise RegressionError(_regression_message(cmp, regressed))


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
