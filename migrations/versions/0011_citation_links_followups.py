"""the citation graph and the follow-up questions of a review

Revision ID: 0011
Revises: 0010

reference_links: one row per reference entry of a paper once it was matched against the library
(by DOI, else by the cited paper's normalised title): the library paper it cites, or none; the
graph read both ways (what a paper cites, what cites it). Removed with the citing paper; the cited
paper's removal leaves the row unresolved.
questions.origin: "asked" (a question someone asked) or "followup" (asked by the follow-up
questioner after a review whose audit passed).
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reference_links",
        sa.Column("reference_id", sa.Integer(), nullable=False),
        sa.Column("citing_paper_id", sa.String(length=64), nullable=False),
        sa.Column("cited_paper_id", sa.String(length=64), nullable=True),
        sa.Column("matched_by", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(["reference_id"], ["paper_references.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["citing_paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["cited_paper_id"], ["papers.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("reference_id"),
    )
    with op.batch_alter_table("reference_links") as batch:
        batch.create_index("ix_reference_links_citing_paper_id", ["citing_paper_id"], unique=False)
        batch.create_index("ix_reference_links_cited_paper_id", ["cited_paper_id"], unique=False)
    with op.batch_alter_table("questions") as batch:
        batch.add_column(sa.Column("origin", sa.String(length=16), nullable=False, server_default="asked"))


def downgrade() -> None:
    with op.batch_alter_table("questions") as batch:
        batch.drop_column("origin")
    with op.batch_alter_table("reference_links") as batch:
        batch.drop_index("ix_reference_links_cited_paper_id")
        batch.drop_index("ix_reference_links_citing_paper_id")
    op.drop_table("reference_links")
