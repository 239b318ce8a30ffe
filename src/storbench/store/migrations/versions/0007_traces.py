"""Block traces: what ``storbench capture`` recorded and what was imported (issue 51).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "traces",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("device", sa.Text(), nullable=True),
        sa.Column("events_count", sa.Integer(), nullable=False),
        sa.Column("span_s", sa.Float(), nullable=False),
        sa.Column("meta_json", sa.Text(), nullable=False),
        sa.Column("figures_json", sa.Text(), nullable=False),
        sa.Column("events", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_traces"),
    )
    op.create_index("ix_traces_label", "traces", ["label"])


def downgrade() -> None:
    op.drop_index("ix_traces_label", table_name="traces")
    op.drop_table("traces")
