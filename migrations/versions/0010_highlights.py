"""a researcher's own highlights and notes on the PDF

Revision ID: 0010
Revises: 0009

highlights: a passage a reader selected on a page of a paper's PDF, with its rectangles on the
page (fractions of the page), the text selected and an optional note; removed with the paper.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "highlights",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=64), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("rects", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("highlights") as batch:
        batch.create_index("ix_highlights_paper_id", ["paper_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("highlights") as batch:
        batch.drop_index("ix_highlights_paper_id")
    op.drop_table("highlights")
