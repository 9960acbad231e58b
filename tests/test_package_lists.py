"""Each package names its modules in its ``__init__``'s docstring, so the list a reader trusts is the list
there is: every package of graphs/ (the README's map lists graphs/ itself), and each package of console/
that keeps such a list."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Written by makemigrations, and the demo task's deliverable: neither is a package of the console's code.
ASIDE = {ROOT / "graphs" / "migrations", ROOT / "graphs" / "demo_project"}


def _packages(top: str) -> list[Path]:
    return sorted(init.parent for init in (ROOT / top).glob("*/**/__init__.py")
                  if not any(init.is_relative_to(aside) for aside in ASIDE))


def _docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""


def _unnamed(package: Path) -> list[str]:
    """The modules and sub-packages of ``package`` its docstring does not name as ````name````."""
    children = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    children |= {path.parent.name for path in package.glob("*/__init__.py")}
    return sorted(name for name in children if f"``{name}``" not in _docstring(package))


@pytest.mark.parametrize("package", _packages("graphs"), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_package_of_graphs_names_each_of_its_modules(package):
    assert _unnamed(package) == []


@pytest.mark.parametrize("package", [package for package in _packages("console") if "\n- ``" in _docstring(package)],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_a_console_package_that_lists_its_modules_lists_them_all(package):
    assert _unnamed(package) == []


def test_a_module_left_out_of_its_package_list_is_found(tmp_path):
    (tmp_path / "__init__.py").write_text('"""A package.\n\n- ``listed`` — named.\n"""\n')
    (tmp_path / "listed.py").write_text("")
    (tmp_path / "forgotten.py").write_text("")

    assert _unnamed(tmp_path) == ["forgotten"]
