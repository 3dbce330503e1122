"""the claim checker's score of each sentence

Revision ID: 0007
Revises: 0006

sentence_verdicts gets p_checker: the trained claim checker's P(supported) for the sentence
against its best evidence excerpt; None where the checker did not score it (a Chinese sentence,
a verdict stored before the checker, the checker turned off).
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.add_column(sa.Column("p_checker", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.drop_column("p_checker")
