"""accounts for a shared `reader serve`

Revision ID: 0015
Revises: 0014

users: the accounts of `reader serve --accounts` (`reader user add NAME`): a unique name, the
password as an Argon2id hash, the failed sign-ins counted towards a lock and when the lock ends.
sentence_judgements and highlights get `user_name`, the account they belong to; the rows made
before (and by the CLI, the single-user and token modes) keep NULL. A judgement is now one per
paper, sentence and account.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("failed_logins", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("sentence_judgements") as batch:
        batch.add_column(sa.Column("user_name", sa.String(length=64), nullable=True))
        batch.create_index("ix_sentence_judgements_user_name", ["user_name"], unique=False)
        batch.drop_constraint("uq_sentence_judgements_paper_sentence", type_="unique")
        batch.create_unique_constraint(
            "uq_sentence_judgements_paper_sentence_user", ["paper_id", "sentence_sha256", "user_name"]
        )
    with op.batch_alter_table("highlights") as batch:
        batch.add_column(sa.Column("user_name", sa.String(length=64), nullable=True))
        batch.create_index("ix_highlights_user_name", ["user_name"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("highlights") as batch:
        batch.drop_index("ix_highlights_user_name")
        batch.drop_column("user_name")
    with op.batch_alter_table("sentence_judgements") as batch:
        batch.drop_constraint("uq_sentence_judgements_paper_sentence_user", type_="unique")
        batch.create_unique_constraint(
            "uq_sentence_judgements_paper_sentence", ["paper_id", "sentence_sha256"]
        )
        batch.drop_index("ix_sentence_judgements_user_name")
        batch.drop_column("user_name")
    op.drop_table("users")
