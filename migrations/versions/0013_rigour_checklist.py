"""the rigour checklist, and how each sentence's verdict was reached

Revision ID: 0013
Revises: 0012

checklist_items: one row per item of a paper's rigour checklist (reader.checklist): found or not,
its value, the sentence and passage it rests on with its pages, how it was decided and what was
searched; replaced by each deep read, removed with the paper.
sentence_verdicts.decided_by and .checklist_item: who decided the verdict (verifier, checker,
extraction, guard, restated, tool, unchecked) and, for the tool's own finding, the checklist item
it states; null for verdicts stored before (their reasons say it).
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checklist_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=64), nullable=False),
        sa.Column("item", sa.String(length=32), nullable=False),
        sa.Column("found", sa.Boolean(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("quote", sa.Text(), nullable=False),
        sa.Column("chunk_id", sa.Integer(), nullable=True),
        sa.Column("page_start", sa.Integer(), nullable=True),
        sa.Column("page_end", sa.Integer(), nullable=True),
        sa.Column("section", sa.Text(), nullable=False),
        sa.Column("decided_by", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("searched", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["chunk_id"], ["chunks.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("paper_id", "item", name="uq_checklist_paper_item"),
    )
    with op.batch_alter_table("checklist_items") as batch:
        batch.create_index("ix_checklist_items_paper_id", ["paper_id"], unique=False)
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.add_column(sa.Column("decided_by", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("checklist_item", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sentence_verdicts") as batch:
        batch.drop_column("checklist_item")
        batch.drop_column("decided_by")
    with op.batch_alter_table("checklist_items") as batch:
        batch.drop_index("ix_checklist_items_paper_id")
    op.drop_table("checklist_items")
