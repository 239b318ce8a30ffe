"""Comparison views (pure): a terminal table, GitHub Markdown, CSV and a JSON-ready dict.

Every view shows the same things for each workload, direction and metric: each
configuration's figure as ``mean ± sd (n)``, each configuration's relative
difference to the baseline and the verdict of Welch's t-test ("better", "worse",
"within noise", or "n=1: no significance" when a side has a single run), and the
leader: ``★`` when it is significantly ahead of every other configuration, ``☆``
when it only has the best mean.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence

from rich.table import Table

from storbench.jsontypes import JSONObject

from ..compare import Cell, Comparison, Config, Row, format_p, lead_pct, metric_label
from ..metrics import MEASURE_DIRECTION
from ..stats.core import VERDICT_INCONCLUSIVE, VERDICT_SINGLE_RUN
from ..stats.core import SampleComparison as Versus
from ..units import fmt_bw, fmt_iops, fmt_ns, formatter
from .csv import csv_number

LEADER_SIGNIFICANT = "★"
LEADER_BEST_MEAN = "☆"
MISSING = "-"

_FORMATTERS: dict[str, Callable[[float | None], str]] = {
    "iops": fmt_iops,
    "bw_bytes": fmt_bw,
    "lat_mean_ns": fmt_ns,
    "clat_p99_ns": fmt_ns,
}


# --------------------------------------------------------------------------- pieces shared by the views


def format_cell(row: Row, cell: Cell | None) -> str:
    """``"1.2k ± 10 (3)"``, ``"1.2k (1)"`` for a single run, with the leader's mark; ``"-"`` for no figure."""
    if cell is None:
        return MISSING
    fmt = formatter(row.metric)
    s = cell.summary
    text = f"{fmt(s.mean)} ± {fmt(s.stddev)} ({s.n})" if s.n >= 2 else f"{fmt(s.mean)} ({s.n})"
    if row.leader == cell.config:
        text += " " + (LEADER_SIGNIFICANT if row.leader_significant else LEADER_BEST_MEAN)
    return text


def format_rel_diff(v: Versus | None) -> str:
    """The column against the baseline in compare's one convention (:func:`storbench.compare.lead_pct`):
    ``"+72.2%"`` it leads the baseline by 72.2 %, ``"-72.2%"`` the baseline leads it by 72.2 %;
    ``"n/a"`` when the baseline is 0; ``""`` for no comparison."""
    if v is None:
        return ""
    lead = lead_pct(v.ratio, v.higher_is_better)
    if lead is None:
        return "n/a"
    return f"{lead:+.1f}%"


def format_verdict(v: Versus | None) -> str:
    """``"better (p=0.003)"``, ``"within noise (p=0.41)"``, ``"n=1: no significance"``; ``""`` for none."""
    if v is None:
        return ""
    if v.verdict == VERDICT_SINGLE_RUN:
        return "n=1: no significance"
    if v.verdict == VERDICT_INCONCLUSIVE or v.p_value is None:
        return "inconclusive"
    p = format_p(v.p_value, v.alpha)
    return f"{v.verdict} (p{p if p.startswith('<') else '=' + p})"


def _legend(cmp: Comparison) -> str:
    base = cmp.config(cmp.baseline).name
    return (
        f"Figures are mean ± sd (runs). Against {base}: +P% leads it by P%, -P% trails it by P% (the faster's lead "
        f"as a percentage of the slower's figure). Verdicts: {cmp.test} against {base}, α = {cmp.alpha:g}. "
        f"{LEADER_SIGNIFICANT} best and significantly ahead of every other configuration; "
        f"{LEADER_BEST_MEAN} best mean, not significantly ahead."
    )


def _columns(cmp: Comparison) -> tuple[list[str], list[int]]:
    """Header texts and, for the comparison columns, the config indices they belong to."""
    bi = cmp.baseline_index
    base = cmp.configs[bi]
    others = [i for i in range(len(cmp.configs)) if i != bi]
    headers = [c.name + (" (baseline)" if i == bi else "") for i, c in enumerate(cmp.configs)]
    for i in others:
        name = cmp.configs[i].name
        headers.append(f"{name} vs {base.name}")
        headers.append("verdict" if len(others) == 1 else f"verdict ({name})")
    return headers, others


def _row_texts(cmp: Comparison, row: Row, others: list[int]) -> list[str]:
    texts = [format_cell(row, cell) for cell in row.cells]
    for i in others:
        texts.append(format_rel_diff(row.versus[i]))
        texts.append(format_verdict(row.versus[i]))
    return texts


# --------------------------------------------------------------------------- terminal


def _short_verdict(v: Versus | None) -> str:
    if v is None:
        return ""
    if v.verdict == VERDICT_SINGLE_RUN:
        return "n=1"
    if v.verdict == VERDICT_INCONCLUSIVE or v.p_value is None:
        return "?"
    return {"within noise": "noise"}.get(v.verdict, v.verdict)


def compact_cell(row: Row, cell: Cell | None, versus: Versus | None, *, se: bool = False) -> str:
    """``"48.2k ±2.5% ★"`` and, against the baseline, ``"-12.3% worse"`` below it: the spread as a
    share of the mean (sd / mean), so a cell stays narrow whatever the unit.  ``se``: the
    Phoronix Test Suite's form instead, the standard error and the run count
    (``"97.8 SE ±1.2, N = 3"``)."""
    if cell is None:
        return MISSING
    fmt = formatter(row.metric)
    s = cell.summary
    text = fmt(s.mean)
    if se:
        shown = fmt if row.direction != MEASURE_DIRECTION else (lambda v: f"{v:,.2f}")  # PTS's "SE +/- 0.15"
        text += f" SE ±{shown(s.stderr)}, N = {s.n}" if s.stderr is not None else f" N = {s.n}"
    elif s.n >= 2 and s.stddev is not None and s.mean:
        text += f" ±{100.0 * s.stddev / abs(s.mean):.1f}%"
    elif s.n < 2:
        text += " (1)"
    if row.leader == cell.config:
        text += " " + (LEADER_SIGNIFICANT if row.leader_significant else LEADER_BEST_MEAN)
    if versus is not None:
        text += f"\n{format_rel_diff(versus)} {_short_verdict(versus)}"
    return text


def format_compare_table(cmp: Comparison, rows: Sequence[Row] | None = None, *, se: bool = False) -> Table:
    """One line per workload and figure, one column per configuration: mean ±sd% (the leader
    marked) and, below it, the difference to the baseline and the verdict.  ``rows``: the rows
    to show (the CLI passes each workload's headline rows unless --all-metrics); by default
    every row.  Fits 120 columns for up to four configurations."""
    from rich import box

    title = "comparison: " + " vs ".join(c.name for c in cmp.configs)
    base = cmp.config(cmp.baseline).name
    spread = "mean, SE ± the standard error, N runs (as the Phoronix Test Suite prints them)" if se else "mean ±sd as a share of the mean"
    legend = (f"Figures: {spread}; below: +P% leads {base} by P%, -P% trails it by P% (the faster's lead as a "
              f"percentage of the slower's figure), and {cmp.test}'s verdict "
              f"(α = {cmp.alpha:g}; noise: within noise, n=1: a single run). {LEADER_SIGNIFICANT} best and significantly "
              f"ahead of all; {LEADER_BEST_MEAN} best mean only.")  # fmt: skip
    table = Table(title=title, caption=legend, header_style="bold", caption_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False)  # fmt: skip
    table.add_column("workload", overflow="fold", max_width=22)
    table.add_column("figure", overflow="fold", max_width=18)
    bi = cmp.baseline_index
    for i, c in enumerate(cmp.configs):
        table.add_column(c.name + (" (baseline)" if i == bi else ""), justify="right", overflow="fold")
    last: str | None = None
    for row in rows if rows is not None else cmp.rows:
        figure = row.metric if row.direction == "result" else f"{row.direction} {metric_label(row.metric)}"
        table.add_row(
            "" if last == row.workload else row.workload,
            figure,
            *(compact_cell(row, cell, row.versus[i], se=se) for i, cell in enumerate(row.cells)),
        )
        last = row.workload
    return table


# --------------------------------------------------------------------------- markdown


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def format_compare_markdown(cmp: Comparison) -> str:
    """A GitHub Markdown table (every row names its workload and direction) and the legend below it."""
    headers, others = _columns(cmp)
    n = len(cmp.configs)
    cols = ["workload", "dir", "metric", *headers]
    align = ["---", "---", "---"] + ["--:" if j < n or (j - n) % 2 == 0 else "---" for j in range(len(headers))]
    lines = [
        "| " + " | ".join(_md(c) for c in cols) + " |",
        "|" + "|".join(align) + "|",
    ]
    for row in cmp.rows:
        cells = [row.workload, row.direction, metric_label(row.metric), *_row_texts(cmp, row, others)]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    lines.append("")
    lines.append(_legend(cmp))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- csv

CSV_COLUMNS = (
    "workload",
    "direction",
    "metric",
    "higher_is_better",
    "config",
    "config_name",
    "baseline",
    "n",
    "mean",
    "stddev",
    "stderr",
    "ci95_lo",
    "ci95_hi",
    "cv",
    "rel_diff_pct",
    "lead_pct",
    "ratio",
    "p_value",
    "verdict",
    "diff_ci95_lo",
    "diff_ci95_hi",
    "leader",
    "leader_significant",
)


def format_compare_csv(cmp: Comparison) -> str:
    """One line per row and configuration.  Empty cells: no such figure (n is empty too),
    or no comparison (the baseline itself, single runs without a p-value)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in cmp.rows:
        for config, cell, v in zip(cmp.configs, row.cells, row.versus):
            s = cell.summary if cell is not None else None
            ci = s.reported_ci95 if s is not None and s.reported_ci95 is not None else (None, None)
            dci = v.diff_ci95 if v is not None and v.diff_ci95 is not None else (None, None)
            writer.writerow(
                [
                    row.workload,
                    row.direction,
                    row.metric,
                    "1" if row.higher_is_better else "0",
                    config.key,
                    config.name,
                    "1" if config.key == cmp.baseline else "0",
                    "" if s is None else s.n,
                    csv_number(s.mean if s else None),
                    csv_number(s.stddev if s else None),
                    csv_number(s.stderr if s else None),
                    csv_number(ci[0]),
                    csv_number(ci[1]),
                    csv_number(s.cv if s else None),
                    csv_number(v.rel_diff_pct if v else None),
                    csv_number(lead_pct(v.ratio, v.higher_is_better) if v else None),
                    csv_number(v.ratio if v else None),
                    csv_number(v.p_value if v else None),
                    v.verdict if v else "",
                    csv_number(dci[0]),
                    csv_number(dci[1]),
                    "1" if row.leader == config.key else "0",
                    "1" if row.leader == config.key and row.leader_significant else "0",
                ]
            )
    return out.getvalue()


# --------------------------------------------------------------------------- json


def _config_to_json(config: Config) -> JSONObject:
    storage = None
    if config.storage is not None:
        from ..storage import storage_to_dict

        storage = storage_to_dict(config.storage)
    return {
        "key": config.key,
        "name": config.name,
        "run_ids": list(config.run_ids),
        "target": config.target,
        "host": config.host,
        "storage": storage,
    }


def _cell_to_json(cell: Cell | None) -> JSONObject | None:
    if cell is None:
        return None
    s = cell.summary
    return {
        "n": s.n,
        "mean": s.mean,
        "stddev": s.stddev,
        "stderr": s.stderr,
        "ci95": None if s.reported_ci95 is None else list(s.reported_ci95),
        **({"ci95_clipped": True} if s.ci95_clipped else {}),
        "cv": s.cv,
        "values": list(cell.values),
    }


def _versus_to_json(v: Versus | None) -> JSONObject | None:
    if v is None:
        return None
    return {
        "rel_diff_pct": v.rel_diff_pct,
        "lead_pct": lead_pct(v.ratio, v.higher_is_better),
        "ratio": v.ratio,
        "p_value": v.p_value,
        "verdict": v.verdict,
        "diff_ci95": None if v.diff_ci95 is None else [v.diff_ci95[0], v.diff_ci95[1]],
        "note": v.note,
    }


def compare_to_json(cmp: Comparison) -> JSONObject:
    """A JSON-ready dict.  ``cells`` and ``versus`` of each row are keyed by configuration
    key; ``null`` means no such figure (cells) or no comparison (versus)."""
    return {
        "configs": [_config_to_json(c) for c in cmp.configs],
        "baseline": cmp.baseline,
        "test": cmp.test,
        "alpha": cmp.alpha,
        "rows": [
            {
                "workload": row.workload,
                "direction": row.direction,
                "metric": row.metric,
                "higher_is_better": row.higher_is_better,
                "leader": row.leader,
                "leader_significant": row.leader_significant,
                "cells": {c.key: _cell_to_json(cell) for c, cell in zip(cmp.configs, row.cells)},
                "versus": {c.key: _versus_to_json(v) for c, v in zip(cmp.configs, row.versus)},
            }
            for row in cmp.rows
        ],
    }
