"""a paper's figures with their pictures

Revision ID: 0014
Revises: 0013

paper_figures: each figure of a paper next to its caption (reader/ingest/figures.py): its label,
caption, page, rectangle (fractions of the page), how its picture was found and the picture as
PNG bytes (in the database, so that every machine sharing it shows them); removed with the paper.
Papers ingested before have none until ingested again.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_figures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=64), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=32), nullable=False),
        sa.Column("caption", sa.Text(), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("rect", sa.JSON(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("png", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("paper_figures") as batch:
        batch.create_index("ix_paper_figures_paper_id", ["paper_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("paper_figures") as batch:
        batch.drop_index("ix_paper_figures_paper_id")
    op.drop_table("paper_figures")
