"""a researcher's own judgement of a sentence

Revision ID: 0009
Revises: 0008

sentence_judgements: a reader's verdict (supported or unsupported) on one sentence of a paper's
analysis, with an optional comment, who gave it and what the audit said then; one per paper and
sentence text (its sha256), removed with the paper.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sentence_judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=64), nullable=False),
        sa.Column("sentence_sha256", sa.String(length=64), nullable=False),
        sa.Column("sentence", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("audit_verdict", sa.String(length=16), nullable=False),
        sa.Column("judged_by", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["papers.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("paper_id", "sentence_sha256", name="uq_sentence_judgements_paper_sentence"),
    )
    with op.batch_alter_table("sentence_judgements") as batch:
        batch.create_index("ix_sentence_judgements_paper_id", ["paper_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sentence_judgements") as batch:
        batch.drop_index("ix_sentence_judgements_paper_id")
    op.drop_table("sentence_judgements")
