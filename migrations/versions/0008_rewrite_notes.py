"""why a rewrite was not kept

Revision ID: 0008
Revises: 0007

analyses gets rewrite_notes: a line for each rewrite the audit loop did not keep (it failed, said
nothing, or kept fewer supported sentences than the text before it), so the stored text is
known to be the earlier one. Empty for analyses stored before.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("analyses") as batch:
        batch.add_column(sa.Column("rewrite_notes", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("analyses") as batch:
        batch.drop_column("rewrite_notes")
