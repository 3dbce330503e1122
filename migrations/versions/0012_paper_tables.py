"""a paper's tables as cells

Revision ID: 0012
Revises: 0011

paper_tables: each table of a paper next to its caption, as rows of cell texts with how many of
them are column headers, its page and rectangle and each cell's rectangle (fractions of the
page); removed with the paper. Papers ingested before have none until ingested again.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_tables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=64), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=32), nullable=False),
        sa.Column("caption", sa.Text(), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("rect", sa.JSON(), nullable=False),
        sa.Column("rows", sa.JSON(), nullable=False),
        sa.Column("header_rows", sa.Integer(), nullable=False),
        sa.Column("cell_rects", sa.JSON(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("paper_tables") as batch:
        batch.create_index("ix_paper_tables_paper_id", ["paper_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("paper_tables") as batch:
        batch.drop_index("ix_paper_tables_paper_id")
    op.drop_table("paper_tables")
