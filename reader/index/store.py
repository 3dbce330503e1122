"""The search index on disk under READER_HOME/index, kept consistent with the chunks table.

Layout: each write makes a new generation directory (gen-000042/) holding the
chunk ids it covers, the paper of each row, the vectors, the BM25 token table
and bm25s's matrix; the file CURRENT names the live generation and is replaced
atomically (write, then rename). A kill mid-write leaves an unreferenced
directory, never a half-written index; a write that fails (a full disk) removes
its temporary directory and raises DiskFull, and the previous generation stays
current. Writers take a file lock; readers see a newer generation written by
another process on their next search.

On first use in a process the stored (chunk id, paper id) pairs are compared
with the database: stale rows are dropped and missing chunks added; a
missing or unreadable index, or one built with another embedding model, is
rebuilt from the database. The on-disk index is a cache: every passage's vector
is stored in the database (chunk_vectors, per embedding model) when it is first
computed, and a passage whose vector is there is never embedded again, so a
machine sharing the database builds its index without embedding anything. Each of these prints one line on stderr. When such
an update cannot be saved (a full disk) it is used from memory for the rest of
the process, and tried again by the next one.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reader.errors import DiskFull, IndexUnusable, is_disk_full
from reader.index.bm25 import BM25Path, TokenTable
from reader.index.dense import DenseMatrix, Embedder, embedder_name, encode_with_progress

FORMAT_VERSION = 1
CURRENT = "CURRENT"

ProgressFn = Callable[[int, int], None]


@dataclass
class IndexData:
    """Everything the index holds, row-aligned."""

    embedder: str
    dim: int
    chunk_ids: np.ndarray  # int64 (n,)
    paper_of_row: np.ndarray  # int32 (n,), position in `papers`
    papers: list[str]
    vectors: np.ndarray  # float32 (n, dim)
    tokens: TokenTable

    @classmethod
    def empty(cls, embedder: str, dim: int = 0) -> IndexData:
        return cls(
            embedder,
            dim,
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            [],
            np.zeros((0, dim), dtype=np.float32),
            TokenTable(),
        )

    @property
    def n_rows(self) -> int:
        return len(self.chunk_ids)

    def rows_of(self, paper_id: str) -> np.ndarray:
        try:
            position = self.papers.index(paper_id)
        except ValueError:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.paper_of_row == position)

    def pairs(self) -> dict[int, str]:
        """chunk id -> paper id for every row."""
        return {int(cid): self.papers[int(p)] for cid, p in zip(self.chunk_ids, self.paper_of_row)}

    def keep_rows(self, rows: np.ndarray) -> IndexData:
        rows = np.asarray(rows, dtype=np.int64)
        used = sorted(set(self.paper_of_row[rows].tolist()))
        remap = np.zeros(len(self.papers), dtype=np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        return IndexData(
            self.embedder,
            self.dim,
            self.chunk_ids[rows],
            remap[self.paper_of_row[rows]],
            [self.papers[i] for i in used],
            self.vectors[rows],
            self.tokens.keep(rows),
        )

    def without(self, paper_ids: set[str]) -> IndexData:
        drop = [i for i, p in enumerate(self.papers) if p in paper_ids]
        if not drop:
            return self
        return self.keep_rows(np.flatnonzero(~np.isin(self.paper_of_row, drop)))

    def append(
        self, paper_ids: list[str], chunk_ids: list[int], texts: list[str], vectors: np.ndarray
    ) -> IndexData:
        papers = list(self.papers)
        position = {p: i for i, p in enumerate(papers)}
        for p in paper_ids:
            if p not in position:
                position[p] = len(papers)
                papers.append(p)
        dim = self.dim or vectors.shape[1]
        return IndexData(
            self.embedder,
            dim,
            np.concatenate([self.chunk_ids, np.asarray(chunk_ids, dtype=np.int64)]),
            np.concatenate([self.paper_of_row, np.asarray([position[p] for p in paper_ids], dtype=np.int32)]),
            papers,
            np.concatenate([self.vectors.reshape(-1, dim), vectors.astype(np.float32)]),
            self.tokens.append(texts),
        )


# ---------------------------------------------------------------- files


def _write_generation(directory: Path, data: IndexData, bm25: BM25Path) -> None:
    directory.mkdir(parents=True)
    meta = {
        "format": FORMAT_VERSION,
        "embedder": data.embedder,
        "dim": data.dim,
        "n_rows": data.n_rows,
        "papers": data.papers,
    }
    np.save(directory / "chunk_ids.npy", data.chunk_ids)
    np.save(directory / "paper_of_row.npy", data.paper_of_row)
    np.save(directory / "vectors.npy", data.vectors)
    np.save(directory / "tok_indptr.npy", data.tokens.indptr)
    np.save(directory / "tok_ids.npy", data.tokens.ids)
    vocab = sorted(data.tokens.vocab, key=data.tokens.vocab.__getitem__)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    bm25.save(directory / "bm25")
    # meta last: a generation without it is incomplete
    (directory / "meta.json").write_text(json.dumps(meta, ensure_ascii=False))


def _generation_bytes(data: IndexData, bm25: BM25Path) -> int:
    """About the size of a generation on disk: its arrays, the vocabulary, bm25s's matrix."""
    arrays = (data.chunk_ids, data.paper_of_row, data.vectors, data.tokens.indptr, data.tokens.ids)
    size = sum(a.nbytes for a in arrays) + 2 * sum(len(t.encode()) + 4 for t in data.tokens.vocab)
    scores = getattr(bm25._bm25, "scores", None) or {}
    size += sum(getattr(v, "nbytes", 0) for v in scores.values())
    return size + 64 * 1024  # file headers, meta.json, bm25s's own json files


def _read_generation(directory: Path) -> tuple[IndexData, BM25Path]:
    meta = json.loads((directory / "meta.json").read_text())
    if meta.get("format") != FORMAT_VERSION:
        raise ValueError(f"format {meta.get('format')!r}, expected {FORMAT_VERSION}")
    vocab_list = json.loads((directory / "vocab.json").read_text())
    tokens = TokenTable(
        {t: i for i, t in enumerate(vocab_list)},
        np.load(directory / "tok_indptr.npy"),
        np.load(directory / "tok_ids.npy"),
    )
    data = IndexData(
        embedder=meta["embedder"],
        dim=int(meta["dim"]),
        chunk_ids=np.load(directory / "chunk_ids.npy"),
        paper_of_row=np.load(directory / "paper_of_row.npy"),
        papers=list(meta["papers"]),
        vectors=np.load(directory / "vectors.npy"),
        tokens=tokens,
    )
    n = int(meta["n_rows"])
    shapes_ok = (
        len(data.chunk_ids) == n
        and len(data.paper_of_row) == n
        and data.vectors.shape == (n, data.dim)
        and tokens.n_rows == n
        and int(tokens.indptr[-1]) == len(tokens.ids)
        and (n == 0 or int(data.paper_of_row.max()) < len(data.papers))
        and (len(tokens.ids) == 0 or int(tokens.ids.max()) < len(vocab_list))
    )
    if not shapes_ok:
        raise ValueError("its files disagree on the number of rows")
    return data, BM25Path.load(directory / "bm25", tokens)


class IndexFiles:
    """Generations under one directory, CURRENT naming the live one."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._lock_depth = 0  # flock is per open file: re-entering must not lock again

    def current_name(self) -> str | None:
        try:
            name = (self.directory / CURRENT).read_text().strip()
        except FileNotFoundError:
            return None
        except (NotADirectoryError, PermissionError) as exc:
            raise self.unusable(exc) from None
        return name or None

    def unusable(self, exc: OSError) -> IndexUnusable:
        """The one line for a folder the index cannot be kept in."""
        if self.directory.exists() and not self.directory.is_dir():
            return IndexUnusable(
                f"{self.directory} is not a folder (the search index is kept there): move it away; "
                "the index is then rebuilt from the database on next use, or by `reader reindex`"
            )
        return IndexUnusable(
            f"{self.directory}: cannot keep the search index there ({exc.strerror or exc}); make it "
            "writable or set READER_HOME to another folder, then run `reader reindex`"
        )

    def read(self) -> tuple[str | None, IndexData | None, BM25Path | None]:
        """(generation, data, bm25); (None, None, None) when there is no index yet.

        Raises on an unreadable index. A generation removed by a concurrent
        writer between reading CURRENT and its files is retried once.
        """
        for attempt in range(2):
            name = self.current_name()
            if name is None:
                return None, None, None
            try:
                data, bm25 = _read_generation(self.directory / name)
                return name, data, bm25
            except FileNotFoundError:
                if attempt == 1 or self.current_name() == name:
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def write_lock(self):
        """Exclusive across processes; re-entrant within one (callers serialize their threads)."""
        import fcntl

        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / ".lock", "w")  # noqa: SIM115 - closed below
        except (FileExistsError, NotADirectoryError, PermissionError) as exc:
            raise self.unusable(exc) from None
        except OSError as exc:
            if exc.errno != errno.EROFS:
                raise
            raise self.unusable(exc) from None
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write(self, data: IndexData, bm25: BM25Path) -> str:
        """Write a new generation and make it current. Call with the write lock held.

        On failure nothing of the new generation is left behind and the current one
        stays; a full disk raises DiskFull (how much the generation needs, and where)."""
        existing = sorted(p.name for p in self.directory.glob("gen-*") if p.is_dir())
        number = int(existing[-1].split("-")[1]) + 1 if existing else 1
        name = f"gen-{number:06d}"
        tmp = self.directory / f".tmp-{name}-{os.getpid()}"
        pointer = self.directory / f".{CURRENT}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            _write_generation(tmp, data, bm25)
            os.replace(tmp, self.directory / name)
            pointer.write_text(name)
            os.replace(pointer, self.directory / CURRENT)
        except BaseException as exc:
            # before cleaning up: afterwards the space the partial files took is free again
            needed = _generation_bytes(data, bm25) if isinstance(exc, OSError) else 0
            full = needed and (is_disk_full(exc) or self._short_of(needed))
            shutil.rmtree(tmp, ignore_errors=True)
            pointer.unlink(missing_ok=True)
            if self.current_name() != name:
                shutil.rmtree(self.directory / name, ignore_errors=True)
            if full:
                raise DiskFull(needed, f"under READER_HOME ({self.directory})") from exc
            raise
        self._clean(keep={name, *existing[-1:]})
        return name

    def _short_of(self, needed: int) -> bool:
        """Whether less than `needed` bytes are free for the index (numpy reports a full
        disk as 'N requested and M written', without an errno)."""
        try:
            return shutil.disk_usage(self.directory).free < needed
        except OSError:
            return False

    def _clean(self, keep: set[str]) -> None:
        # the previous generation stays for readers that are loading it right now
        for path in self.directory.iterdir():
            stale_gen = path.name.startswith("gen-") and path.name not in keep
            if stale_gen or path.name.startswith(".tmp-"):
                shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- the index


def _notice(message: str) -> None:
    print(f"search index: {message}", file=sys.stderr, flush=True)


class SearchIndex:
    """BM25 + dense index over every chunk in the database.

    Tests build it directly with an injected embedder; the application uses
    SearchIndex.open(settings, db), which loads the configured model on first need.
    """

    def __init__(
        self,
        index_dir: Path,
        db,
        embedder: Embedder | None = None,
        *,
        embedder_name: str | None = None,
        load_embedder: Callable[[], Embedder] | None = None,
        quiet: bool = True,
    ):
        if embedder is None and load_embedder is None:
            raise ValueError("SearchIndex needs an embedder or a way to load one")
        self.files = IndexFiles(index_dir)
        self.db = db
        self._embedder = embedder
        self._load_embedder = load_embedder
        self.embedder_name = embedder.name if embedder is not None else embedder_name
        self.quiet = quiet
        self._lock = threading.RLock()
        self._generation: str | None = None
        self._data: IndexData | None = None
        self._bm25: BM25Path | None = None
        self._dense: DenseMatrix | None = None

    @classmethod
    def open(cls, settings, db, *, quiet: bool | None = None) -> SearchIndex:
        """The index under settings.index_dir; nothing is read until first use."""
        from reader.index.dense import load_embedder

        return cls(
            settings.index_dir,
            db,
            embedder_name=embedder_name(settings.embed_model),
            load_embedder=lambda: load_embedder(settings),
            quiet=not sys.stderr.isatty() if quiet is None else quiet,
        )

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._load_embedder()
        return self._embedder

    # ------------------------------------------------------------ reading

    def _ensure_loaded(self, pending_paper: str | None = None) -> IndexData:
        """The loaded index, current with what other processes wrote.

        pending_paper: a paper the caller is about to add or remove; its rows
        are left out of the consistency check so they are not handled twice.
        """
        with self._lock:
            if self._data is None:
                self._load_and_check(pending_paper)
            elif self.files.current_name() != self._generation:
                self._reload(pending_paper)
            return self._data

    def _reload(self, pending_paper: str | None = None) -> None:
        """Pick up a generation another process wrote (it was consistent when written)."""
        try:
            generation, data, bm25 = self.files.read()
        except IndexUnusable:
            raise
        except Exception:  # noqa: BLE001 - any unreadable index is rebuilt
            data = None
        if data is None or data.embedder != self.embedder_name:
            self._load_and_check(pending_paper)
            return
        self._generation, self._data, self._bm25 = generation, data, bm25

    def _load_and_check(self, pending_paper: str | None = None) -> None:
        db_pairs = self._db_pairs()
        if pending_paper is not None:
            db_pairs = {c: p for c, p in db_pairs.items() if p != pending_paper}
        try:
            generation, data, bm25 = self.files.read()
        except IndexUnusable:
            raise
        except Exception as exc:  # noqa: BLE001
            self._rebuild_because(
                f"{self.files.directory} is unreadable ({_reason(exc)}); rebuilding from the database",
                pending_paper,
            )
            return
        if data is None:
            if db_pairs:
                self._rebuild_because(
                    f"no index at {self.files.directory}; building it from the database", pending_paper
                )
            else:
                self._data = IndexData.empty(self.embedder_name)
                self._bm25 = BM25Path(TokenTable())
                self._generation = None
            return
        if data.embedder != self.embedder_name:
            self._rebuild_because(
                f"built with embedding model {data.embedder!r}, configured {self.embedder_name!r}; "
                "rebuilding from the database",
                pending_paper,
            )
            return
        self._generation, self._data, self._bm25 = generation, data, bm25
        stored = data.pairs()
        if pending_paper is not None:
            stored = {c: p for c, p in stored.items() if p != pending_paper}
        if stored != db_pairs:
            self._repair(stored, db_pairs)

    def _rebuild_because(self, why: str, pending_paper: str | None) -> None:
        self.embedder  # noqa: B018 - loaded first: a model that cannot load is the one line to show
        _notice(why)
        self._rebuild_locked(None, pending_paper, unsaved_ok=True)

    def _repair(self, stored: dict[int, str], db_pairs: dict[int, str]) -> None:
        stale = {cid for cid, paper in stored.items() if db_pairs.get(cid) != paper}
        missing = sorted(cid for cid, paper in db_pairs.items() if stored.get(cid) != paper)
        _notice(
            f"out of step with the database ({len(stale)} stale, {len(missing)} missing chunks); updating it"
        )
        with self.files.write_lock():
            data = self._data
            if stale:
                keep = np.flatnonzero(~np.isin(data.chunk_ids, np.fromiter(stale, dtype=np.int64)))
                data = data.keep_rows(keep)
            if missing:
                rows = self._db_chunks(missing)
                data = self._embed_into(data, rows, "Embedding missing chunks", None)
            self._commit(data, unsaved_ok=True)

    def _db_pairs(self) -> dict[int, str]:
        from sqlalchemy import select

        from reader.store.tables import Chunk

        with self.db() as session:
            return {cid: pid for cid, pid in session.execute(select(Chunk.id, Chunk.paper_id))}

    def _db_chunks(self, chunk_ids: list[int] | None = None) -> list[tuple[str, int, str]]:
        """(paper id, chunk id, text) for the given chunks (all when None), in paper order."""
        from sqlalchemy import select

        from reader.store.tables import Chunk

        query = select(Chunk.paper_id, Chunk.id, Chunk.text).order_by(Chunk.paper_id, Chunk.ordinal)
        result = []
        with self.db() as session:
            if chunk_ids is None:
                return [tuple(row) for row in session.execute(query)]
            for start in range(0, len(chunk_ids), 500):
                batch = chunk_ids[start : start + 500]
                result.extend(tuple(r) for r in session.execute(query.where(Chunk.id.in_(batch))))
        return result

    # ------------------------------------------------------------ writing

    def _embed_into(
        self,
        data: IndexData,
        rows: list[tuple[str, int, str]],
        label: str,
        on_progress: ProgressFn | None,
    ) -> IndexData:
        if not rows:
            return data
        texts = [text for _, _, text in rows]
        # Vectors stored in the database (by any machine) are used as they are; only the
        # passages without one are embedded, and theirs are stored for the other machines.
        stored = self._stored_vectors([c for _, c, _ in rows])
        todo = [i for i, (_, cid, _) in enumerate(rows) if cid not in stored]
        fresh = None
        if todo:
            with _progress(label, len(todo), on_progress, self.quiet) as report:
                fresh = encode_with_progress(self.embedder, [texts[i] for i in todo], report)
            fresh = np.asarray(fresh, dtype=np.float32)
            self._save_vectors([rows[i][1] for i in todo], fresh)
        dim = fresh.shape[1] if fresh is not None else len(next(iter(stored.values())))
        vectors = np.zeros((len(rows), dim), dtype=np.float32)
        for i, (_, cid, _) in enumerate(rows):
            if cid in stored:
                vectors[i] = stored[cid]
        if fresh is not None:
            vectors[todo] = fresh
        return data.append([p for p, _, _ in rows], [c for _, c, _ in rows], texts, vectors)

    def _stored_vectors(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        """chunk id -> its vector under this index's embedding model, from the database."""
        from sqlalchemy import select

        from reader.store.tables import ChunkVector

        found: dict[int, np.ndarray] = {}
        try:
            with self.db() as session:
                for start in range(0, len(chunk_ids), 500):
                    query = select(ChunkVector.chunk_id, ChunkVector.vector).where(
                        ChunkVector.embedder == self.embedder_name,
                        ChunkVector.chunk_id.in_(chunk_ids[start : start + 500]),
                    )
                    for cid, blob in session.execute(query):
                        found[cid] = np.frombuffer(bytes(blob), dtype=np.float32)
        except Exception as exc:  # noqa: BLE001 - the vectors are a cache: embed instead
            _notice(f"stored passage vectors unreadable ({_reason(exc)}); embedding instead")
            return {}
        dims = {len(v) for v in found.values()}
        return found if len(dims) <= 1 else {}

    def _save_vectors(self, chunk_ids: list[int], vectors: np.ndarray) -> None:
        """Store passage vectors for other machines (one that is there already is kept)."""
        from reader.store.db import transaction
        from reader.store.tables import ChunkVector

        rows = [
            {
                "chunk_id": int(cid),
                "embedder": self.embedder_name,
                "dim": int(vectors.shape[1]),
                "vector": np.ascontiguousarray(vec, dtype=np.float32).tobytes(),
            }
            for cid, vec in zip(chunk_ids, vectors)
        ]
        try:
            with transaction(self.db) as session:
                dialect = session.get_bind().dialect.name
                if dialect == "postgresql":
                    from sqlalchemy.dialects.postgresql import insert
                else:
                    from sqlalchemy.dialects.sqlite import insert
                for start in range(0, len(rows), 500):
                    session.execute(insert(ChunkVector).on_conflict_do_nothing(), rows[start : start + 500])
        except Exception as exc:  # noqa: BLE001 - e.g. the paper was removed meanwhile
            _notice(
                f"passage vectors not stored in the database ({_reason(exc)}); "
                "other machines embed these passages themselves"
            )

    def _commit(self, data: IndexData, unsaved_ok: bool = False) -> None:
        """Build BM25 for `data`, write it as the new generation, and use it. Hold the write lock.

        unsaved_ok: on a full disk use `data` from memory (the files keep the last good
        generation, and the next process repairs it again) instead of raising DiskFull."""
        bm25 = BM25Path.build(data.tokens)
        try:
            self._generation = self.files.write(data, bm25)
        except DiskFull as exc:
            if not unsaved_ok:
                raise
            _notice(f"the update could not be saved ({exc.problem}); using it from memory for now")
            self._generation = self.files.current_name()
        self._data, self._bm25 = data, bm25

    def add_paper(self, paper_id: str, chunks: list[tuple[int, str]]) -> None:
        """Index one paper's chunks [(chunk_id, text)], replacing whatever it had before."""
        self._ensure_loaded(pending_paper=paper_id)
        rows = [(paper_id, int(cid), text) for cid, text in chunks]
        # embed before taking the lock: it is the slow part
        fresh = self._embed_into(
            IndexData.empty(self.embedder_name), rows, f"Embedding {len(rows)} chunks", None
        )
        with self._lock, self.files.write_lock():
            # the newest state: another process may have written since we loaded
            data = self._ensure_loaded(pending_paper=paper_id).without({paper_id})
            if rows:
                data = data.append(
                    [paper_id] * len(rows),
                    [c for _, c, _ in rows],
                    [t for _, _, t in rows],
                    fresh.vectors,
                )
            self._commit(data)

    def ensure_paper(self, paper_id: str) -> bool:
        """Make sure a paper stored by another process or machine is searchable here: its
        passages are added from the database (with their stored vectors) when this index
        lacks them. Returns True when it had to add them."""
        if paper_id in self._ensure_loaded().papers:
            return False
        with self._lock, self.files.write_lock():
            data = self._ensure_loaded()
            if paper_id in data.papers:
                return False
            rows = [row for row in self._db_paper_chunks(paper_id)]
            if not rows:
                return False
            self._commit(self._embed_into(data, rows, f"Embedding {len(rows)} chunks", None), unsaved_ok=True)
            return True

    def _db_paper_chunks(self, paper_id: str) -> list[tuple[str, int, str]]:
        from sqlalchemy import select

        from reader.store.tables import Chunk

        with self.db() as session:
            return [
                tuple(r)
                for r in session.execute(
                    select(Chunk.paper_id, Chunk.id, Chunk.text)
                    .where(Chunk.paper_id == paper_id)
                    .order_by(Chunk.ordinal)
                )
            ]

    def remove_paper(self, paper_id: str) -> None:
        with self._lock, self.files.write_lock():
            data = self._ensure_loaded(pending_paper=paper_id)
            if paper_id not in data.papers:
                return
            self._commit(data.without({paper_id}))

    def rebuild(self, on_progress: ProgressFn | None = None) -> int:
        """Rebuild everything from the chunks table; returns the number of chunks indexed."""
        with self._lock:
            return self._rebuild_locked(on_progress)

    def _rebuild_locked(
        self, on_progress: ProgressFn | None, skip_paper: str | None = None, unsaved_ok: bool = False
    ) -> int:
        rows = [row for row in self._db_chunks() if row[0] != skip_paper]
        with self.files.write_lock():
            data = self._embed_into(
                IndexData.empty(self.embedder_name),
                rows,
                f"Embedding {len(rows)} chunks",
                on_progress,
            )
            self._commit(data, unsaved_ok)
        return len(rows)

    # ------------------------------------------------------------ searching

    def __len__(self) -> int:
        return self._ensure_loaded().n_rows

    def chunk_ids(self) -> set[int]:
        return {int(c) for c in self._ensure_loaded().chunk_ids}

    def paper_ids(self) -> list[str]:
        return list(self._ensure_loaded().papers)

    def _rows(self, data: IndexData, paper_id: str | None) -> np.ndarray | None:
        return None if paper_id is None else data.rows_of(paper_id)

    def bm25_top(self, query: str, k: int, paper_id: str | None = None) -> list[tuple[int, float]]:
        """(chunk id, BM25 score) of the k best chunks, best first."""
        with self._lock:  # the matrix and its BM25 from the same generation, even mid-update
            data = self._ensure_loaded()
            bm25 = self._bm25
        rows = self._rows(data, paper_id)
        if rows is not None and len(rows) == 0:
            return []
        return [(int(data.chunk_ids[r]), s) for r, s in bm25.top(query, k, rows)]

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.encode([query])[0]

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        return self.embedder.encode(queries)

    def dense_top(
        self,
        query: str,
        k: int,
        paper_id: str | None = None,
        query_vector: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the k nearest chunks, best first."""
        data = self._ensure_loaded()
        rows = self._rows(data, paper_id)
        if data.n_rows == 0 or (rows is not None and len(rows) == 0):
            return []
        if query_vector is None:
            query_vector = self.embed_query(query)
        with self._lock:
            if self._dense is None or self._dense.vectors is not data.vectors:
                self._dense = DenseMatrix(data.vectors)
            dense = self._dense
        return [(int(data.chunk_ids[r]), s) for r, s in dense.top(query_vector, k, rows)]

    def chunk_details(self, chunk_ids: list[int]) -> dict[int, dict]:
        """id -> {paper_id, text, section, page_start, page_end} from the database, one query."""
        from sqlalchemy import select

        from reader.store.tables import Chunk

        if not chunk_ids:
            return {}
        query = select(
            Chunk.id, Chunk.paper_id, Chunk.text, Chunk.section, Chunk.page_start, Chunk.page_end
        ).where(Chunk.id.in_(chunk_ids))
        with self.db() as session:
            return {
                row.id: {
                    "paper_id": row.paper_id,
                    "text": row.text,
                    "section": row.section or "",
                    "page_start": row.page_start,
                    "page_end": row.page_end,
                }
                for row in session.execute(query)
            }

    def search(
        self,
        query: str,
        paper_id: str | None = None,
        top_k_per_path: int = 3,
        *,
        query_vector: np.ndarray | None = None,
        split: bool = True,
    ):
        """multi_search over this index (query_vector: the query's embedding, if already known;
        split: search a multi-sentence query sentence by sentence)."""
        from reader.index.search import multi_search

        return multi_search(
            self,
            query,
            paper_id=paper_id,
            top_k_per_path=top_k_per_path,
            query_vector=query_vector,
            split=split,
        )


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


@contextmanager
def _progress(label: str, total: int, on_progress: ProgressFn | None, quiet: bool):
    """A progress callback: the caller's, a rich bar on stderr, or nothing when quiet."""
    if on_progress is not None or quiet or total == 0:
        yield on_progress
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done, _total: bar.update(task, completed=done)
