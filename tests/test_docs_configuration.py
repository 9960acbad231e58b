"""The configuration page (docs/configuration.md) names every setting the console reads from the
environment, and no ``WORKGRAPH_*`` setting it does not read.

The settings are found in console/settings.py's source: the first argument of every call to one of
console/env.py's ``env_*`` readers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = (ROOT / "console" / "settings.py", ROOT / "console" / "settings_outbound.py")
ENV_READERS = ROOT / "console" / "env.py"
PAGE = ROOT / "docs" / "configuration.md"
# A name the page writes as code: `WORKGRAPH_AGENT`, `DEBUG`.
_CODE_NAME = re.compile(r"`([A-Z][A-Z0-9_]*)`")


def _readers() -> set[str]:
    module = ast.parse(ENV_READERS.read_text())
    return {node.name for node in module.body if isinstance(node, ast.FunctionDef) and node.name.startswith("env_")}


def _settings_read_from_the_environment() -> set[str]:
    readers = _readers()
    names = set()
    for node in (node for module in SETTINGS for node in ast.walk(ast.parse(module.read_text()))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in readers:
            first = node.args[0]
            assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                f"settings.py line {node.lineno}: {node.func.id} reads a name that is not a literal"
            )
            names.add(first.value)
    return names


def _names_on_the_page() -> set[str]:
    return set(_CODE_NAME.findall(PAGE.read_text()))


def test_it_finds_the_settings_through_every_env_reader():
    assert {"env_str", "env_bool", "env_int", "env_float", "env_choice", "env_list", "env_pairs", "env_prices",
            "env_url"} <= _readers()
    assert {"SECRET_KEY", "DATABASE_URL", "WORKGRAPH_AGENT", "WORKGRAPH_MODEL_PRICES",
            "WORKGRAPH_AGENT_RUNNERS", "WORKGRAPH_SANDBOX"} <= _settings_read_from_the_environment()


def test_the_page_names_every_setting_read_from_the_environment():
    missing = sorted(_settings_read_from_the_environment() - _names_on_the_page())
    assert not missing, f"docs/configuration.md does not document {', '.join(missing)}"


def test_the_page_names_no_workgraph_setting_the_console_does_not_read():
    listed = {name for name in _names_on_the_page() if name.startswith("WORKGRAPH_")}
    invented = sorted(listed - _settings_read_from_the_environment())
    assert not invented, f"docs/configuration.md documents settings console/settings.py does not read: {invented}"
