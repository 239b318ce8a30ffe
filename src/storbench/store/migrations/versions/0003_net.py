"""Network ceilings measured with iperf3 (storbench net), for the share-ceiling check.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "net_ceilings",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("server", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("streams", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("bits_per_second", sa.Float(), nullable=False),
        sa.Column("raw_json", sa.Text(), nullable=False),
        sa.CheckConstraint("direction IN ('to-server', 'from-server')", name="ck_net_ceilings_direction"),
        sa.PrimaryKeyConstraint("id", name="pk_net_ceilings"),
    )
    op.create_index("ix_net_ceilings_server", "net_ceilings", ["server"])


def downgrade() -> None:
    op.drop_index("ix_net_ceilings_server", table_name="net_ceilings")
    op.drop_table("net_ceilings")
