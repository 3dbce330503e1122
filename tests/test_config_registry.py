"""The settings registry: precedence, masking, the config file's keys, writing, the CRAG group."""

from __future__ import annotations

import json

import pytest

from reader.config import SETTINGS, CragSettings, describe, load_settings, write_config_values
from reader.errors import ConfigError


def env_with_file(tmp_path, text: str, **env) -> dict:
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    return {"READER_HOME": str(tmp_path), "READER_CONFIG": str(config), **env}


def test_the_environment_wins_over_the_file_and_the_file_over_the_default(tmp_path):
    env = env_with_file(
        tmp_path,
        'crag_threshold = 0.7\nupload_limit_mb = 9\nllm_model = "from-file"\n',
        READER_CRAG_THRESHOLD="0.8",
    )
    settings = load_settings(env)
    assert settings.crag.threshold == 0.8  # environment
    assert settings.upload_limit_mb == 9 and settings.generator.model == "from-file"  # file
    assert settings.crag.theta_high == CragSettings().theta_high == 0.7  # default
    assert settings.config_file == tmp_path / "config.toml"
    assert load_settings({**env, "READER_CRAG_THRESHOLD": ""}).crag.threshold == 0.7  # empty: unset


def test_the_home_config_file_is_read_without_READER_CONFIG(tmp_path):
    (tmp_path / "config.toml").write_text('crag_refusal = "writer"\nworkers = true\n', encoding="utf-8")
    settings = load_settings({"READER_HOME": str(tmp_path)})
    assert settings.crag.refusal == "writer" and settings.workers is True
    assert settings.config_file == tmp_path / "config.toml"
    assert load_settings({"READER_HOME": str(tmp_path / "elsewhere")}).config_file is None


def test_derived_defaults_follow_the_settings_they_come_from(tmp_path):
    settings = load_settings(
        {
            "READER_HOME": str(tmp_path),
            "READER_LLM_BASE_URL": "http://h:1/v1",
            "READER_LLM_MODEL": "m",
            "READER_VERIFIER_MODEL": "checker",
        }
    )
    assert settings.database_url == f"sqlite:///{tmp_path / 'reader.db'}"
    assert (settings.verifier.base_url, settings.verifier.model) == ("http://h:1/v1", "checker")
    assert settings.generator.timeout_s == settings.verifier.timeout_s == 120.0


def test_secrets_are_masked(tmp_path):
    secrets = {s.variable: f"secret-{n}-value" for n, s in enumerate(SETTINGS) if s.declaration.secret}
    assert {"READER_LLM_API_KEY", "READER_WEB_TOKEN", "READER_SEMANTIC_SCHOLAR_KEY"} <= set(secrets)
    shown = dict(
        describe(
            load_settings(
                {
                    "READER_HOME": str(tmp_path),
                    **secrets,
                    "READER_DATABASE_URL": "postgresql://me:hunter2@db/reader",
                }
            )
        )
    )
    assert not any(secret in value for secret in secrets.values() for value in shown.values())
    assert shown["READER_LLM_API_KEY"] == "****"
    assert shown["READER_DATABASE_URL"] == "postgresql://me:****@db/reader"


def test_reader_config_shows_nothing_of_a_secret(reader_env, monkeypatch):
    """Not even its first characters (it showed `Zq7…****` of READER_WEB_TOKEN): only whether it is set."""
    from click.testing import CliRunner

    from reader.cli import cli

    monkeypatch.setenv("READER_WEB_TOKEN", "Zq7-long-web-token")
    monkeypatch.setenv("READER_LLM_API_KEY", "sk-abcdefgh12345")
    shown = CliRunner().invoke(cli, ["config"])
    assert shown.exit_code == 0, shown.output
    assert "Zq7" not in shown.output and "sk-" not in shown.output
    [token] = [line for line in shown.output.splitlines() if "READER_WEB_TOKEN" in line]
    assert token.split()[-1] == "****"
    rows = json.loads(CliRunner().invoke(cli, ["config", "--json"]).output)
    text = json.dumps(rows)
    assert "Zq7" not in text and "sk-" not in text


def test_a_key_that_is_no_setting_or_environment_only_is_refused_in_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown keys \['crag_treshold'\]"):
        load_settings(env_with_file(tmp_path, "crag_treshold = 0.7\n"))
    with pytest.raises(ConfigError, match=r"unknown keys \['config'\]"):
        load_settings(env_with_file(tmp_path, 'config = "other.toml"\n'))


def test_a_bad_value_in_the_file_is_named_like_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="READER_CRAG_ROUTING='fancy': use counts or confidence"):
        load_settings(env_with_file(tmp_path, 'crag_routing = "fancy"\n'))
    with pytest.raises(ConfigError, match="READER_QUEUE_ATTEMPTS=0 must be 1 or more"):
        load_settings(env_with_file(tmp_path, "queue_attempts = 0\n"))
    with pytest.raises(ConfigError, match="READER_QUEUE_LEASE=-1.0 must be a positive number of seconds"):
        load_settings({"READER_HOME": str(tmp_path), "READER_QUEUE_LEASE": "-1"})
    with pytest.raises(ConfigError, match="READER_CACHE='sometimes': use on or off"):
        load_settings({"READER_HOME": str(tmp_path), "READER_CACHE": "sometimes"})


def test_written_values_load_back(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(
        '# my settings\nllm_model = "kept"\ncrag_threshold = 0.5\nverify_threshold = 0.4\n', encoding="utf-8"
    )
    write_config_values(
        path,
        {
            "crag_threshold": 0.7,
            "crag_routing": "confidence",
            "crag_quote_threshold": None,
            "workers": True,
            "verify_threshold": None,
        },
    )
    text = path.read_text(encoding="utf-8")
    assert text.startswith('# my settings\nllm_model = "kept"\ncrag_threshold = 0.7\n')
    assert (
        'crag_quote_threshold = "off"' in text and "workers = true" in text and "verify_threshold" not in text
    )
    settings = load_settings({"READER_HOME": str(tmp_path)})
    assert (settings.crag.threshold, settings.crag.routing, settings.crag.quote_threshold) == (
        0.7,
        "confidence",
        None,
    )
    assert (
        settings.workers is True and settings.verify_threshold == 0.17 and settings.generator.model == "kept"
    )


def test_only_registered_keys_and_valid_values_are_written(tmp_path):
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError, match="'crag_fancy' is not a setting; known keys:"):
        write_config_values(path, {"crag_fancy": 1})
    with pytest.raises(ConfigError, match="'config' is not a setting"):
        write_config_values(path, {"config": "x.toml"})
    with pytest.raises(ConfigError, match="READER_CRAG_THRESHOLD=2.0 must lie between 0 and 1"):
        write_config_values(path, {"crag_threshold": 2.0})
    assert not path.exists()


def test_the_crag_group_is_what_the_pipeline_runs_with(tmp_path):
    from reader.crag.calibrate import Setting
    from reader.crag.pipeline import CragConfig, crag_config

    settings = load_settings(
        {"READER_HOME": str(tmp_path), "READER_CRAG_REFUSAL": "grader", "READER_CRAG_QUOTE_THRESHOLD": "off"}
    )
    config = crag_config(settings.crag)
    assert isinstance(config, CragConfig) and (config.refusal, config.quote_threshold) == ("grader", None)
    assert crag_config(settings.crag) == CragConfig(refusal="grader", quote_threshold=None)
    changed = crag_config(settings.crag, threshold=0.9, max_corrections=0)
    assert (changed.threshold, changed.max_corrective_rounds, changed.refusal) == (0.9, 0, "grader")
    assert crag_config(CragSettings()) == CragConfig() == Setting().config()
    assert isinstance(Setting(), CragSettings)
