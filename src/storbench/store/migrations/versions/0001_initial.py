"""Initial schema: runs and results.

Revision ID: 0001
Revises:
Create Date: 2024-06-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("suite", sa.Text(), nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.String(40), nullable=True),
        sa.Column("storbench_version", sa.String(64), nullable=True),
        sa.Column("meta_json", sa.Text(), nullable=False),
        sa.CheckConstraint("kind IN ('run', 'import')", name="ck_runs_kind"),
        sa.CheckConstraint(
            "status IN ('running', 'complete', 'incomplete', 'failed')", name="ck_runs_status"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_label", "runs", ["label"])
    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("workload", sa.Text(), nullable=False),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("repetition", sa.Integer(), nullable=False),
        sa.Column("fio_version", sa.String(64), nullable=True),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("job_text", sa.Text(), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=False),
        sa.Column("raw_output", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("host", sa.Text(), nullable=True),
        sa.Column("read_iops", sa.Float(), nullable=True),
        sa.Column("write_iops", sa.Float(), nullable=True),
        sa.Column("read_bw_bytes", sa.Float(), nullable=True),
        sa.Column("write_bw_bytes", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_results_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_results"),
    )
    op.create_index("ix_results_run_id", "results", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_results_run_id", table_name="results")
    op.drop_table("results")
    op.drop_index("ix_runs_label", table_name="runs")
    op.drop_table("runs")
