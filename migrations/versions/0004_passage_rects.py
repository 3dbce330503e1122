"""where each passage stands on its pages, the original file name and the DOI of a paper

Revision ID: 0004
Revises: 0003

Nullable: papers stored before this migration get their passages' rectangles re-derived
from their stored PDF the first time the web page asks for them (reader.ingest.pages);
their file name is then the stored path's name.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chunks") as batch:
        batch.add_column(sa.Column("rects", sa.JSON(), nullable=True))
    with op.batch_alter_table("papers") as batch:
        batch.add_column(sa.Column("file_name", sa.Text(), nullable=True))
        batch.add_column(sa.Column("doi", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("papers") as batch:
        batch.drop_column("doi")
        batch.drop_column("file_name")
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("rects")
