"""What the runs page filters on, one narrow row per run: its targets, hosts and finding checks.

Every filter of ``storbench serve``'s runs page (``?target=``, ``?host=``, ``?finding=``) used to
look inside every result of every run (1.1 s at 100,000 runs / 1,000,000 results, reading each
result's row); this table holds, per run, the distinct values those filters match, each on a line
of its own ("\\n/srv/pool3\\n/srv/pool4\\n"), kept by the store as results are added.  The
upgrade fills it from the results already stored.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _lines(values: list[str]) -> str:
    return "\n" + "\n".join(values) + "\n" if values else ""


def upgrade() -> None:
    op.create_table(
        "run_index",
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE", name="fk_run_index_run_id_runs"), nullable=False),
        sa.Column("targets", sa.Text(), nullable=False, server_default=""),
        sa.Column("hosts", sa.Text(), nullable=False, server_default=""),
        sa.Column("checks", sa.Text(), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("run_id", name="pk_run_index"),
    )
    conn = op.get_bind()
    found: dict[int, tuple[list[str], list[str], list[str]]] = {}
    for row in conn.execute(sa.text("SELECT id, meta_json FROM runs")):
        try:
            host = (json.loads(str(row.meta_json)).get("host") or {}).get("hostname")
        except (ValueError, AttributeError):
            host = None
        found[int(row.id)] = ([], [host] if isinstance(host, str) and host else [], [])
    # streamed (a server-side cursor on PostgreSQL): a history of a million results is not held at once
    rows = conn.execute(sa.text("SELECT run_id, target, host, findings_json FROM results ORDER BY id").execution_options(stream_results=True))
    for row in rows:
        target, host, findings_json = row.target, row.host, row.findings_json
        targets, hosts, checks = found.setdefault(int(row.run_id), ([], [], []))
        if target and str(target) not in targets:
            targets.append(str(target))
        if host and host != "all" and str(host) not in hosts:
            hosts.append(str(host))
        try:
            stored = json.loads(str(findings_json)) if findings_json else {}
        except ValueError:
            stored = {}
        for f in stored.get("findings", []) if isinstance(stored, dict) else []:
            check = f.get("check") if isinstance(f, dict) else None
            if isinstance(check, str) and check not in checks:
                checks.append(check)
    table = sa.table("run_index", sa.column("run_id"), sa.column("targets"), sa.column("hosts"), sa.column("checks"))
    batch = []
    for run_id, (targets, hosts, checks) in found.items():
        batch.append({"run_id": run_id, "targets": _lines(targets), "hosts": _lines(hosts), "checks": _lines(checks)})
        if len(batch) >= 5000:
            op.bulk_insert(table, batch)
            batch = []
    if batch:
        op.bulk_insert(table, batch)


def downgrade() -> None:
    op.drop_table("run_index")
