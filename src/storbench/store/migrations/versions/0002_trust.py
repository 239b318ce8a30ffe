"""Trustworthy numbers: storage description, device activity, findings, space and interval series per result.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

COLUMNS = ("storage_json", "activity_json", "findings_json", "space_json", "series_json")


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
