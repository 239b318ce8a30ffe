"""The live state of runs in progress (what storbench serve's live page shows), one row per run.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "live_runs",
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("runs.id", ondelete="CASCADE", name="fk_live_runs_run_id_runs"), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.Column("state_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_live_runs"),
    )


def downgrade() -> None:
    op.drop_table("live_runs")
