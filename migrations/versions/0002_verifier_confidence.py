"""the verifier's confidence: per-token log-probabilities in the response cache, P(YES) per verdict

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_cache") as batch:
        batch.add_column(sa.Column("logprobs", sa.JSON(), nullable=True))
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.add_column(sa.Column("p_yes", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.drop_column("p_yes")
    with op.batch_alter_table("llm_cache") as batch:
        batch.drop_column("logprobs")
