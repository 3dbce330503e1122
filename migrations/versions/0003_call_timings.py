"""what the server spent per call: prompt-processing and generation time, prompt-cache tokens

Revision ID: 0003
Revises: 0002

Nullable: rows logged before this migration, cache hits, failed calls and backends that
do not report timings have none (`reader stats` shows "–").
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.add_column(sa.Column("prompt_ms", sa.Float(), nullable=True))
        batch.add_column(sa.Column("generation_ms", sa.Float(), nullable=True))
        batch.add_column(sa.Column("cached_prompt_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.drop_column("cached_prompt_tokens")
        batch.drop_column("generation_ms")
        batch.drop_column("prompt_ms")
