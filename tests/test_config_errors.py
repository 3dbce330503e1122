"""A broken config file or setting is one line naming the file or variable and what to do."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
