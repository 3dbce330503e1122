"""A broken config file or setting is one line naming the file or variable and what to do."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import make_reader

from reader.config import load_settings
from reader.errors import ConfigError


def test_unknown_key_names_the_file_and_the_known_keys(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('llm_base_ur = "http://127.0.0.1:8080/v1"\n', encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"config\.toml: unknown keys \['llm_base_ur'\]; known keys: .*llm_base_url"
    ):
        load_settings({"READER_CONFIG": str(config)})


def test_invalid_toml_names_the_file(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("llm_base_url = http://no-quotes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config\.toml: not valid TOML"):
        load_settings({"READER_CONFIG": str(config)})


def test_a_missing_config_file_says_it_cannot_be_read(tmp_path):
    with pytest.raises(ConfigError, match=r"nowhere\.toml: cannot read it"):
        load_settings({"READER_CONFIG": str(tmp_path / "nowhere.toml")})


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("READER_LLM_TIMEOUT", "soon", "READER_LLM_TIMEOUT='soon' is not a number"),
        ("READER_LLM_CONCURRENCY", "2.5", "READER_LLM_CONCURRENCY='2.5' is not a whole number"),
        ("READER_UPLOAD_LIMIT_MB", "lots", "READER_UPLOAD_LIMIT_MB='lots' is not a whole number"),
    ],
)
def test_a_value_that_is_not_a_number_is_named(name, value, message, tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_settings({"READER_HOME": str(tmp_path), name: value})
    assert str(caught.value) == message


def test_the_command_prints_it_in_one_line(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[broken\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(READER_HOME=str(tmp_path / "home"), READER_CONFIG=str(config))
    run = subprocess.run(
        [sys.executable, "-m", "reader", "papers"], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "config.toml: not valid TOML" in lines[0], run.stderr
    assert "Traceback" not in run.stderr


# ------------------------------------------------------------ every setting is checked at load


@pytest.mark.parametrize(
    "name, value, words",
    [
        (
            "READER_DATABASE_URL",
            "notaurl",
            ["READER_DATABASE_URL='notaurl'", "not a database URL", "sqlite:///"],
        ),
        ("READER_DATABASE_URL", "mysql://me:hunter2@db.example/reader", ["mysql", "postgresql", "sqlite"]),
        ("READER_LLM_TIMEOUT", "0", ["READER_LLM_TIMEOUT=0", "positive"]),
        ("READER_LLM_TIMEOUT", "-5", ["READER_LLM_TIMEOUT=-5", "positive"]),
        ("READER_LLM_TIMEOUT", "nan", ["READER_LLM_TIMEOUT='nan'", "finite"]),
        ("READER_LLM_TIMEOUT", "inf", ["READER_LLM_TIMEOUT='inf'", "finite"]),
        ("READER_QUEUE_LEASE", "inf", ["READER_QUEUE_LEASE='inf'", "finite"]),
        ("READER_LLM_CONCURRENCY", "0", ["READER_LLM_CONCURRENCY=0", "1 or more"]),
        ("READER_UPLOAD_LIMIT_MB", "-1", ["READER_UPLOAD_LIMIT_MB=-1", "1 or more"]),
        ("READER_UPLOAD_LIMIT_MB", "0", ["READER_UPLOAD_LIMIT_MB=0", "1 or more"]),
        ("READER_CACHE", "maybe", ["READER_CACHE='maybe'", "on or off"]),
        ("READER_OUTPUT_LANGUAGE", "klingon", ["READER_OUTPUT_LANGUAGE='klingon'", "en", "zh"]),
        ("READER_EXTERNAL_SEARCH", "arxiv,gogle", ["READER_EXTERNAL_SEARCH", "gogle", "openalex"]),
        ("READER_LLM_BASE_URL", "notaurl", ["READER_LLM_BASE_URL='notaurl'", "http", "scripted:"]),
        ("READER_VERIFIER_BASE_URL", "ftp://x/v1", ["READER_VERIFIER_BASE_URL='ftp://x/v1'", "http"]),
        ("READER_EMBED_MODEL", "/no/such/model", ["READER_EMBED_MODEL='/no/such/model'", "folder"]),
        ("READER_EMBED_MODEL", "not a model!", ["READER_EMBED_MODEL='not a model!'", "hub"]),
    ],
)
def test_a_value_a_setting_cannot_use_is_refused_at_load(name, value, words, tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_settings({"READER_HOME": str(tmp_path), name: value})
    message = str(caught.value)
    assert "\n" not in message and all(word in message for word in words), message
    assert "hunter2" not in message  # a password in a URL is never shown


@pytest.mark.parametrize(
    "name, value, loaded",
    [
        ("READER_DATABASE_URL", "postgresql+psycopg://me@db.example/reader", None),
        ("READER_DATABASE_URL", "sqlite:////srv/reader/reader.db", None),
        ("READER_LLM_TIMEOUT", "2.5", 2.5),
        ("READER_OUTPUT_LANGUAGE", "ZH", "zh"),
        ("READER_OUTPUT_LANGUAGE", "en-US", "en"),
        ("READER_EXTERNAL_SEARCH", " arxiv, OpenAlex ", None),
        ("READER_EXTERNAL_SEARCH", "off", None),
        ("READER_LLM_BASE_URL", "http://127.0.0.1:8080/v1", None),
        ("READER_LLM_BASE_URL", "scripted:latency_ms=200", None),
        ("READER_EMBED_MODEL", "BAAI/bge-small-en-v1.5", None),
    ],
)
def test_values_a_setting_can_use_still_load(name, value, loaded, tmp_path):
    from reader.config import SETTINGS

    settings = load_settings({"READER_HOME": str(tmp_path), name: value})
    [entry] = [s for s in SETTINGS if s.variable == name]
    assert entry.value_in(settings) == (value.strip() if loaded is None else loaded)


def test_a_home_that_is_a_file_is_refused_at_load(tmp_path):
    home = tmp_path / "home"
    home.write_text("")
    with pytest.raises(ConfigError, match=r"READER_HOME=.*home.* is not a folder"):
        load_settings({"READER_HOME": str(home)})


def test_the_external_searches_a_setting_accepts_are_the_adapters():
    from reader.config import EXTERNAL_SEARCHES
    from reader.crag.scholarly import ADAPTERS

    assert set(EXTERNAL_SEARCHES) == set(ADAPTERS)


@pytest.mark.parametrize(
    "value, words",
    [("notaurl", ["READER_DATABASE_URL='notaurl'"]), ("mysql://me:hunter2@db.example/reader", ["mysql"])],
)
def test_a_database_url_reader_cannot_use_is_one_line_from_the_command(value, words, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(READER_HOME=str(tmp_path / "home"), READER_DATABASE_URL=value)
    run = subprocess.run(
        [sys.executable, "-m", "reader", "papers"], env=env, capture_output=True, text=True, timeout=60
    )
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and all(word in lines[0] for word in words), run.stderr
    assert "hunter2" not in run.stderr


# ------------------------------------------------------------ an embedding model that is not there


@contextlib.contextmanager
def counting_proxy():
    """A loopback port that counts the connections made to it and closes each at once: set as
    every proxy, it sees any attempt to reach the network."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    connections = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except OSError:
                continue
            connections.append(client.getpeername())
            client.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", connections
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_an_embedding_model_that_is_not_there_fails_at_once_without_the_network(tmp_path):
    """No model folder and no such hub model in the cache: one line naming the value, in
    seconds, and no attempt to reach the hub (nothing leaves the machine)."""
    name = "no-such-owner/no-such-embedding-model"
    text_file = tmp_path / "paper.txt"
    text_file.write_text("A paper.\n\nIt has a paragraph about reading order and coverage.\n")
    library = make_reader(tmp_path / "home", cache=None)
    assert library.ingest([text_file])[0].status == "ingested"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("READER_", "HF_", "TRANSFORMERS_")) and "proxy" not in k.lower()
    }
    with counting_proxy() as (proxy, connections):
        env.update(
            READER_HOME=str(tmp_path / "home"),
            READER_LLM_BASE_URL="scripted:",
            READER_EMBED_MODEL=name,
            HF_HOME=str(tmp_path / "hf"),  # an empty cache
            HTTPS_PROXY=proxy,
            HTTP_PROXY=proxy,
            ALL_PROXY=proxy,
        )
        started = time.monotonic()
        run = subprocess.run(
            [sys.executable, "-m", "reader", "search", "reading order"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        elapsed = time.monotonic() - started
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and f"READER_EMBED_MODEL={name!r}" in lines[0], run.stderr[-2000:]
    assert "HF_HUB_OFFLINE=0" in lines[0]  # how to let it be downloaded
    assert connections == [], f"{len(connections)} attempts to reach the network"
    assert elapsed < 30, f"{elapsed:.0f} s"


def _reader_papers(env_changes: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-m", "reader", "papers"], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "home-fifo", "folder", "large", "binary"])
def test_a_config_file_that_is_no_regular_small_text_file_is_refused_at_once(special, tmp_path):
    """READER_CONFIG=/dev/zero grew to 10 GB in 8 s; a named pipe hung for ever. Only a regular
    file of at most 1 MB is read, as ingest reads papers: one line, at once."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"READER_HOME": str(home)}
    if special == "/dev/zero":
        env["READER_CONFIG"] = "/dev/zero"
        expected = (
            "config file /dev/zero: not a regular file (a character device); only regular files are read"
        )
    elif special in ("fifo", "home-fifo"):
        pipe = home / "config.toml" if special == "home-fifo" else tmp_path / "config.toml"
        os.mkfifo(pipe)
        if special == "fifo":
            env["READER_CONFIG"] = str(pipe)
        expected = f"config file {pipe}: not a regular file (a named pipe); only regular files are read"
    elif special == "folder":
        env["READER_CONFIG"] = str(tmp_path)
        expected = f"config file {tmp_path}: is a folder; set READER_CONFIG to a TOML file"
    elif special == "large":
        big = tmp_path / "config.toml"
        big.write_text("# padding\n" * 200_000, encoding="utf-8")
        env["READER_CONFIG"] = str(big)
        expected = f"config file {big}: 2,000,000 bytes, larger than a config file may be (1024 kB)"
    else:
        binary = tmp_path / "config.toml"
        binary.write_bytes(b"llm_model = '\xff\xfe'\n")
        env["READER_CONFIG"] = str(binary)
        expected = f"config file {binary}: not UTF-8 text (a TOML file is UTF-8)"
    started = time.monotonic()
    run = _reader_papers(env, timeout=60)
    assert time.monotonic() - started < 30
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.returncode == 1 and run.stderr.strip().splitlines() == [f"Error: {expected}"], run.stderr
