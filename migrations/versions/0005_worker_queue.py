"""review workers on several machines: the queue's leases, queued files' bytes, passage vectors

Revision ID: 0005
Revises: 0004

review_jobs gets what the queue (reader/queue.py) needs: the queued file (paper_files, one
job per file), who holds a running job, the token of its attempt, its lease and heartbeat,
and how many attempts it had. paper_files keeps a queued file's bytes so that a worker on
any machine can ingest it; chunk_vectors keeps each passage's embedding so that a machine
builds its search index without embedding again. analyses gets a unique (paper_id, kind):
two runs that store one paper's review at once cannot leave two sets (older duplicates are
removed first, keeping the newest of each kind).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_files",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )
    op.create_table(
        "chunk_vectors",
        sa.Column("chunk_id", sa.Integer(), nullable=False),
        sa.Column("embedder", sa.String(length=200), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["chunk_id"], ["chunks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chunk_id", "embedder"),
    )
    with op.batch_alter_table("review_jobs") as batch:
        batch.add_column(sa.Column("file_sha256", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("worker", sa.Text(), server_default="", nullable=False))
        batch.add_column(sa.Column("claim", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("attempts", sa.Integer(), server_default="0", nullable=False))
        batch.create_unique_constraint("uq_review_jobs_file_sha256", ["file_sha256"])
        batch.create_foreign_key(
            "fk_review_jobs_file_sha256", "paper_files", ["file_sha256"], ["sha256"], ondelete="CASCADE"
        )
    # Keep the newest analysis of each kind per paper, then forbid a second one.
    op.execute("DELETE FROM analyses WHERE id NOT IN (SELECT max(id) FROM analyses GROUP BY paper_id, kind)")
    with op.batch_alter_table("analyses") as batch:
        batch.create_unique_constraint("uq_analyses_paper_kind", ["paper_id", "kind"])


def downgrade() -> None:
    with op.batch_alter_table("analyses") as batch:
        batch.drop_constraint("uq_analyses_paper_kind", type_="unique")
    with op.batch_alter_table("review_jobs") as batch:
        batch.drop_constraint("fk_review_jobs_file_sha256", type_="foreignkey")
        batch.drop_constraint("uq_review_jobs_file_sha256", type_="unique")
        batch.drop_column("attempts")
        batch.drop_column("heartbeat_at")
        batch.drop_column("lease_until")
        batch.drop_column("claim")
        batch.drop_column("worker")
        batch.drop_column("queued_at")
        batch.drop_column("file_sha256")
    op.drop_table("chunk_vectors")
    op.drop_table("paper_files")
