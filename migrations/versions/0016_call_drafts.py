"""what speculative decoding drafted per call: tokens drafted and tokens accepted

Revision ID: 0016
Revises: 0015

llama.cpp's `timings` carries `draft_n` and `draft_n_accepted` when READER_SPECULATIVE (or a
llama-server started with drafting) drafted tokens for a reply; `reader stats` sums them per
stage, role/model and paper to show how much of the drafting paid off (issue 45).
Nullable: rows logged before this migration, cache hits, failed calls, replies that drafted
nothing (llama.cpp then gives neither figure) and backends without drafting have none
(`reader stats` shows "–").
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.add_column(sa.Column("drafted_tokens", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("accepted_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("llm_calls") as batch:
        batch.drop_column("accepted_tokens")
        batch.drop_column("drafted_tokens")
