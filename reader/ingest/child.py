"""Parsing a PDF in a child process whose memory and time are bounded.

A small PDF can hold compressed streams that expand without bound: a 60 kB file whose content
stream unpacks to 20 MB of shown text took 1.7 GB and 10 s to parse in place, one of 400 MB
took 7 GB. So no process that does anything else parses a PDF: `python -m reader.ingest.child`
imports pymupdf, limits its own address space to what it uses plus READER_INGEST_MEMORY_MB,
and parses one PDF at a time (its pages, its passages and their places on the pages, its tables), sending
back plain data as JSON (never a pickle: what it read was hostile). The caller waits at most
READER_INGEST_TIMEOUT for the reply and then kills it; the child's CPU time is capped a little
beyond that too, so a child whose caller died cannot spin on. A child that ran out of memory,
was killed or ended is replaced by a fresh one for the next file; an idle one is kept for the
next (starting one costs about a second of imports). The children end with the caller.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path

from reader.errors import IngestError, describe_error
from reader.ingest.limits import IngestLimits
from reader.ingest.model import (
    Block,
    CaptionData,
    ChunkData,
    FigureData,
    ParsedPaper,
    ReferenceData,
    TableData,
)

STARTUP_S = 120.0  # imports on a cold disk; not the parse's time
_KEEP_IDLE = 2
_OUT_OF_MEMORY = re.compile(r"\b(?:m|re|c)alloc\b[^)]*\)? failed|out of memory|bad_alloc|MemoryError", re.I)


def memory_refusal(limits: IngestLimits) -> str:
    return (
        f"parsing it needs more than {limits.memory_mb} MB of memory (compressed streams that "
        "expand without bound?); refused, nothing stored (READER_INGEST_MEMORY_MB raises the limit)"
    )


def time_refusal(limits: IngestLimits) -> str:
    return (
        f"parsing it took longer than {limits.timeout_s:g} s; stopped, nothing stored "
        "(READER_INGEST_TIMEOUT raises the limit)"
    )


# ---------------------------------------------------------------- the caller's side


def parse_pdf_in_child(
    path: Path, data: bytes, sha256: str, limits: IngestLimits | None = None
) -> tuple[ParsedPaper, list[ChunkData]]:
    """The parsed PDF and its passages (with their places on the pages), parsed in a child
    process within `limits`. Raises IngestError with the one-line reason otherwise."""
    limits = limits or IngestLimits()
    path = Path(path)
    child = _take(limits.memory_mb, path)
    try:
        child.send(
            {
                "name": str(path),
                "sha256": sha256,
                "max_pages": limits.max_pages,
                "timeout_s": limits.timeout_s,
                "tables": limits.tables,
                "figures": limits.figures,
            },
            data,
        )
        reply = child.receive(limits.timeout_s)
    except (EOFError, OSError):
        raise IngestError(path, f"the PDF parser ended on it ({child.stop()}); nothing stored") from None
    except BaseException:  # Ctrl-C: the parse in hand is abandoned with its child
        child.stop()
        raise
    if reply is None:
        child.stop()
        raise IngestError(path, time_refusal(limits))
    if "memory" in reply:
        child.stop()
        raise IngestError(path, memory_refusal(limits))
    _give_back(child)
    if "refused" in reply:
        raise IngestError(path, reply["refused"])
    if "error" in reply:
        raise IngestError(path, f"unexpected error while parsing it ({reply['error']}); nothing stored")
    return _paper(reply["paper"]), [ChunkData(**c) for c in reply["chunks"]]


def _paper(fields: dict) -> ParsedPaper:
    return ParsedPaper(
        **{
            **fields,
            "blocks": [Block(**b) for b in fields["blocks"]],
            "captions": [CaptionData(**c) for c in fields["captions"]],
            "references": [ReferenceData(**r) for r in fields["references"]],
            "tables": [TableData(**t) for t in fields.get("tables", [])],
            "figures": [
                FigureData(**{**f, "png": base64.b64decode(f["png"])}) for f in fields.get("figures", [])
            ],
        }
    )


class _Child:
    def __init__(self, memory_mb: int):
        self.memory_mb = memory_mb
        ours, theirs = socket.socketpair()
        with theirs, _closed_on_error(ours):
            self.process = subprocess.Popen(
                [sys.executable, "-m", "reader.ingest.child", str(theirs.fileno()), str(memory_mb)],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=_child_env(),
                start_new_session=True,  # a Ctrl-C at the terminal is the caller's to handle
            )
        self.conn = Connection(ours.detach())
        with _idle_lock:
            _children.add(self)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, header: dict, data: bytes) -> None:
        self.conn.send_bytes(json.dumps(header).encode())
        self.conn.send_bytes(data)

    def receive(self, timeout: float) -> dict | None:
        """The child's reply, or None when none came within `timeout` seconds."""
        if not self.conn.poll(timeout):
            return None
        return json.loads(self.conn.recv_bytes())

    def stop(self) -> str:
        """Kill the child (if it still runs) -> how it ended, in words."""
        if self.alive():
            self.process.kill()
        try:
            code = self.process.wait(10)
        except subprocess.TimeoutExpired:
            code = None
        self.conn.close()
        with _idle_lock:
            _children.discard(self)
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"


@contextmanager
def _closed_on_error(sock: socket.socket):
    try:
        yield sock
    except BaseException:
        sock.close()
        raise


def _child_env() -> dict:
    """The caller's environment, with this copy of reader importable first."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


_idle: list[_Child] = []
_children: set[_Child] = set()  # every child started and not stopped, idle or at work
_idle_lock = threading.Lock()


def _take(memory_mb: int, path: Path) -> _Child:
    """An idle child with this memory limit, or a fresh one once it is ready."""
    found, dead = None, []
    with _idle_lock:
        for child in list(_idle):
            if not child.alive():
                _idle.remove(child)
                dead.append(child)
            elif found is None and child.memory_mb == memory_mb:
                _idle.remove(child)
                found = child
    for child in dead:
        child.stop()
    if found is not None:
        return found
    try:
        child = _Child(memory_mb)
    except OSError as exc:
        raise IngestError(
            path, f"the PDF parser could not start ({describe_error(exc)}); nothing stored"
        ) from None
    try:
        ready = child.receive(STARTUP_S)
    except (EOFError, OSError):
        ready = {"failed": child.stop()}
    if ready is None:
        ready = {"failed": f"no sign of life within {STARTUP_S:g} s"}
    if "ready" not in ready:
        child.stop()
        raise IngestError(path, f"the PDF parser could not start ({ready['failed']}); nothing stored")
    return child


def _give_back(child: _Child) -> None:
    """Keep the child for the next file; the longest idle one beyond _KEEP_IDLE is stopped."""
    with _idle_lock:
        _idle.append(child)
        extra = _idle.pop(0) if len(_idle) > _KEEP_IDLE else None
    if extra is not None:
        extra.stop()


def _stop_all() -> None:
    with _idle_lock:
        _idle.clear()
        children = list(_children)
    for child in children:
        child.stop()


def _forget_all() -> None:
    """In a forked copy of the caller: the children are the original's."""
    _idle.clear()
    _children.clear()


atexit.register(_stop_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all)


# ---------------------------------------------------------------- the child's side


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _peak_address_space() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _prepare(memory_mb: int) -> int | None:
    """Import what parsing needs, then cap the address space at what is in use plus
    `memory_mb` -> the cap (None where the system has no such limit)."""
    # pymupdf imports its layout package (an ONNX model, ~1 s and 250 MB) when installed;
    # text extraction never uses it
    sys.modules.setdefault("pymupdf.layout", None)
    import pymupdf  # noqa: F401

    import reader.ingest.chunk  # noqa: F401
    import reader.ingest.pages  # noqa: F401
    import reader.ingest.pdf  # noqa: F401

    try:
        import resource
    except ImportError:
        return None
    in_use = _address_space()
    if in_use is None:
        return None
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = in_use + memory_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    return cap


def _cap_cpu(seconds: float) -> None:
    """Let this process use about `seconds` more CPU time (SIGXCPU ends it after): the
    caller stops waiting then, and if it died meanwhile nobody else would stop this one."""
    try:
        import resource
    except ImportError:
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 5
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _parse(
    path: Path, data: bytes, sha256: str, max_pages: int, tables: str = "auto", figures: bool = True
) -> dict:
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pages import passage_rects
    from reader.ingest.pdf import parse_pdf
    from reader.ingest.tables import find_tables

    parsed = parse_pdf(path, data, sha256, max_pages=max_pages)
    try:
        parsed.tables = find_tables(data, parsed.captions, tables)
    except (Exception, MemoryError):  # noqa: BLE001 - the tables are an extra: the paper stands without them
        parsed.tables = []
    chunks = chunk_paper(parsed)
    if chunks:
        places = passage_rects(data, [(c.page_start, c.page_end, c.text) for c in chunks])
        for chunk, rects in zip(chunks, places):
            chunk.rects = rects
    paper = asdict(parsed)
    paper["figures"] = _figures(data, parsed.captions) if figures else []
    return {"paper": paper, "chunks": [asdict(c) for c in chunks]}


def _figures(data: bytes, captions) -> list[dict]:
    """The figures with their pictures as base64 text (the reply is JSON); [] where they fail."""
    from reader.ingest.figures import find_figures

    try:
        figures = find_figures(data, captions)
    except (Exception, MemoryError):  # noqa: BLE001 - the figures are an extra: the paper stands without them
        return []
    return [{**asdict(f), "png": base64.b64encode(f.png).decode("ascii")} for f in figures]


def _out_of_memory(message: str, cap: int | None) -> bool:
    near_cap = cap is not None and _peak_address_space() >= cap - 8 * 1024 * 1024
    return bool(_OUT_OF_MEMORY.search(message)) or near_cap


def _serve(header: dict, data: bytes, cap: int | None) -> tuple[bytes, bool]:
    """One request -> (the reply, whether this child may take another)."""
    memory = json.dumps({"memory": True}).encode()
    _cap_cpu(header["timeout_s"])
    try:
        reply = _parse(
            Path(header["name"]),
            data,
            header["sha256"],
            header["max_pages"],
            header.get("tables", "auto"),
            header.get("figures", True),
        )
        return json.dumps(reply).encode(), True
    except MemoryError:
        return memory, False
    except IngestError as exc:
        if _out_of_memory(exc.reason, cap):
            return memory, False
        return json.dumps({"refused": exc.reason}).encode(), True
    except Exception as exc:  # noqa: BLE001 - told to the caller in one line
        if _out_of_memory(f"{type(exc).__name__}: {exc}", cap):
            return memory, False
        return json.dumps({"error": describe_error(exc)}).encode(), True


def main(argv: list[str]) -> int:
    conn = Connection(int(argv[0]))
    try:
        cap = _prepare(int(argv[1]))
    except Exception as exc:  # noqa: BLE001 - told to the caller in one line
        conn.send_bytes(json.dumps({"failed": describe_error(exc)}).encode())
        return 1
    conn.send_bytes(json.dumps({"ready": True}).encode())
    while True:
        try:
            header = json.loads(conn.recv_bytes())
            data = conn.recv_bytes()
        except (EOFError, OSError):  # the caller is gone
            return 0
        reply, fresh = _serve(header, data, cap)
        del data
        conn.send_bytes(reply)
        if not fresh:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
