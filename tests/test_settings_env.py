"""The environment helpers and what console/settings.py makes of the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from console.env import env_bool, env_choice, env_float, env_int, env_list, env_prices, env_url
from graphs.agents import get_runner
from tests.scripted_agents import ScriptedRunner

ROOT = Path(__file__).resolve().parent.parent


def test_env_bool_reads_common_spellings():
    assert env_bool("X", environ={"X": "yes"}) is True
    assert env_bool("X", environ={"X": "0"}) is False
    assert env_bool("X", True, environ={}) is True


def test_env_bool_rejects_a_typo():
    with pytest.raises(ImproperlyConfigured, match="X must be a boolean"):
        env_bool("X", environ={"X": "ture"})


def test_env_prices_reads_dollars_per_million_input_and_output_tokens():
    prices = env_prices("P", environ={"P": "gpt-4o=2.5/10, gpt-4o-mini=0.15/0.6"})
    assert prices == {"gpt-4o": (2.5, 10.0), "gpt-4o-mini": (0.15, 0.6)}
    assert env_prices("P", environ={}) == {}


@pytest.mark.parametrize("bad", ["gpt=2.5", "gpt=a/b", "gpt=1/2/3", "gpt=-1/2"])
def test_env_prices_names_the_price_it_cannot_read(bad):
    with pytest.raises(ImproperlyConfigured, match="P"):
        env_prices("P", environ={"P": bad})


def test_env_int_applies_default_and_bounds():
    assert env_int("N", 500, environ={}) == 500
    assert env_int("N", 500, environ={"N": " 42 "}) == 42
    with pytest.raises(ImproperlyConfigured, match="N must be an integer"):
        env_int("N", 500, environ={"N": "many"})
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("N", 500, minimum=1, environ={"N": "0"})


def test_env_float_rejects_negative_and_garbage():
    assert env_float("T", 1.5, environ={"T": "2.5"}) == 2.5
    with pytest.raises(ImproperlyConfigured):
        env_float("T", 1.5, environ={"T": "-1"})
    with pytest.raises(ImproperlyConfigured):
        env_float("T", 1.5, environ={"T": "soon"})


def test_env_choice_names_the_allowed_values():
    assert env_choice("A", "offline", ("offline", "claude"), environ={}) == "offline"
    with pytest.raises(ImproperlyConfigured, match="offline, claude"):
        env_choice("A", "offline", ("offline", "claude"), environ={"A": "gpt"})


def test_env_list_splits_on_commas():
    assert env_list("H", ["a"], environ={}) == ["a"]
    assert env_list("H", environ={"H": "example.com, .example.org ,"}) == ["example.com", ".example.org"]


def test_env_url_checks_the_scheme():
    assert env_url("U", schemes=("redis",), environ={}) is None
    assert env_url("U", schemes=("redis",), environ={"U": "redis://127.0.0.1:6379/0"}).startswith("redis://")
    with pytest.raises(ImproperlyConfigured, match="U must start with"):
        env_url("U", schemes=("redis",), environ={"U": "http://127.0.0.1:6379"})


def _settings_in_subprocess(env: dict[str, str]) -> subprocess.CompletedProcess:
    """Import console.settings fresh with exactly ``env`` (plus PATH) and dump what matters as JSON."""
    code = (
        "import json; from console import settings as s; "
        "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], 'layer': s.CHANNEL_LAYERS['default']"
        "['BACKEND'], 'execution': s.WORKGRAPH_EXECUTION, 'agent': s.WORKGRAPH_AGENT, "
        "'max_nodes': s.WORKGRAPH_MAX_NODES, 'max_depth': s.WORKGRAPH_MAX_DEPTH, 'hosts': s.ALLOWED_HOSTS, "
        "'db_name': str(s.DATABASES['default']['NAME']), 'db_options': s.DATABASES['default'].get('OPTIONS', {})}))"
    )
    base = {"PATH": os.environ["PATH"], "WORKGRAPH_VAR_DIR": os.environ["WORKGRAPH_VAR_DIR"]}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_defaults_are_the_embedded_mode():
    result = _settings_in_subprocess({"DEBUG": "1"})
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "console.sqlite"
    assert values["layer"] == "channels.layers.InMemoryChannelLayer"
    assert values["execution"] == "embedded"
    assert values["agent"] == "offline"
    assert (values["max_nodes"], values["max_depth"]) == (500, 50)


def test_a_sqlite_database_url_gets_the_embedded_configuration(tmp_path):
    result = _settings_in_subprocess({"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path}/console.sqlite3"})
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert (values["engine"], values["db_name"]) == ("console.sqlite", f"{tmp_path}/console.sqlite3")
    assert values["db_options"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in values["db_options"]["init_command"]


def test_database_and_redis_urls_switch_to_the_distributed_mode():
    result = _settings_in_subprocess(
        {
            "SECRET_KEY": "x" * 60,
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "ALLOWED_HOSTS": "console.example.org",
            "WORKGRAPH_MAX_NODES": "80",
        }
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.postgresql"
    assert values["layer"] == "channels_redis.pubsub.RedisPubSubChannelLayer"
    assert values["execution"] == "celery"
    assert values["max_nodes"] == 80
    assert values["hosts"] == ["console.example.org"]
    assert values["db_options"] == {"server_side_binding": True, "prepare_threshold": 5}


def test_prepared_statements_can_be_turned_off_for_a_pooler():
    result = _settings_in_subprocess(
        {"DEBUG": "1", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
         "WORKGRAPH_DB_PREPARE_THRESHOLD": "0"}
    )
    assert result.returncode == 0, result.stderr
    options = json.loads(result.stdout)["db_options"]
    assert options == {"sslmode": "disable", "server_side_binding": True, "prepare_threshold": None}


def test_a_runner_named_in_the_settings_can_be_chosen_as_the_agent(settings):
    settings.WORKGRAPH_AGENT_RUNNERS = {"scripted-extension": "tests.scripted_agents.ScriptedRunner"}
    settings.WORKGRAPH_AGENT = "scripted-extension"
    assert isinstance(get_runner(), ScriptedRunner)


def test_the_settings_accept_an_agent_their_runners_name():
    env = {"DEBUG": "1", "WORKGRAPH_AGENT_RUNNERS": "echo=tests.scripted_agents.ScriptedRunner",
           "WORKGRAPH_AGENT": "echo"}
    result = _settings_in_subprocess(env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["agent"] == "echo"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "SECRET_KEY must be set unless DEBUG is on"),
        ({"DEBUG": "1", "DATABASE_URL": "mysql://db/x"}, "DATABASE_URL must start with"),
        ({"DEBUG": "1", "WORKGRAPH_AGENT": "gpt5"}, "WORKGRAPH_AGENT must be one of"),
        ({"DEBUG": "1", "WORKGRAPH_MAX_DEPTH": "deep"}, "WORKGRAPH_MAX_DEPTH must be an integer"),
        ({"DEBUG": "1", "WORKGRAPH_AGENT": "openai"}, "needs WORKGRAPH_OPENAI_BASE_URL"),
        ({"DEBUG": "1", "WORKGRAPH_AGENT_RUNNERS": "echo"}, "WORKGRAPH_AGENT_RUNNERS must hold name=value pairs"),
        ({"DEBUG": "1", "WORKGRAPH_COMMAND_ENV": "PIP_INDEX_URL,SECRET_KEY,WORKGRAPH_OPENAI_API_KEY"},
         "WORKGRAPH_COMMAND_ENV may not pass the console's own settings to agents and commands: SECRET_KEY, "
         "WORKGRAPH_OPENAI_API_KEY"),
        ({"DEBUG": "1", "WORKGRAPH_AGENT_ENV": "ANTHROPIC_API_KEY,DATABASE_URL,REDIS_URL"},
         "WORKGRAPH_AGENT_ENV may not pass the console's own settings to agents and commands: DATABASE_URL, "
         "REDIS_URL"),
        ({"DEBUG": "1", "WORKGRAPH_SANDBOX": "docker"}, "WORKGRAPH_SANDBOX must be one of auto, bwrap, none"),
    ],
)
def test_bad_values_stop_start_up_with_a_clear_error(env, message):
    result = _settings_in_subprocess(env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_deploy_check_passes_with_production_values():
    env = {
        "PATH": os.environ["PATH"],
        "WORKGRAPH_VAR_DIR": os.environ["WORKGRAPH_VAR_DIR"],
        "SECRET_KEY": "k3y-" + "x7Qz!p9" * 10,
        "ALLOWED_HOSTS": "console.example.org",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "console.settings"},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
