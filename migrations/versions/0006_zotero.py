"""papers from Zotero: the item key, a stored citation key, collections and item type

Revision ID: 0006
Revises: 0005

papers gets zotero_key (indexed: re-importing finds the paper an item already gave),
citekey (the key Zotero or Better BibTeX stored; None when the export makes one) and
zotero_meta (JSON: the item's collections, type, attachment key and venue).
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("papers") as batch:
        batch.add_column(sa.Column("zotero_key", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("citekey", sa.Text(), nullable=True))
        batch.add_column(sa.Column("zotero_meta", sa.JSON(), nullable=True))
        batch.create_index("ix_papers_zotero_key", ["zotero_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("papers") as batch:
        batch.drop_index("ix_papers_zotero_key")
        batch.drop_column("zotero_meta")
        batch.drop_column("citekey")
        batch.drop_column("zotero_key")
