"""The layers of the code, held three ways: pyproject.toml's import contracts (``lint-imports``), the
README's map of the code, which lists them in the same order and names every module of each package in
its row, and the 400-line limit of every module."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400
# Source and tests the 400-line limit holds; migrations are written by makemigrations.
LIMITED = {"graphs": (".py", ".mjs"), "console": (".py",), "tests": (".py", ".js", ".mjs"), "static/js": (".js",)}
LIMIT_ASIDE = {"graphs/migrations"}


def _contract(contract_id: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return next(contract for contract in config["contracts"] if contract["id"] == contract_id)


def _graphs_layers() -> list[set[str]]:
    """The layers of graphs/ from the ground up, each a set of dotted module names."""
    contract = _contract("graphs-layers")
    (container,) = contract["containers"]
    return [{f"{container}.{name.strip()}" for name in re.split(r"[|:]", layer)}
            for layer in reversed(contract["layers"])]


def _map_modules() -> list[str]:
    """The modules the README's map names in its first column, as dotted names, in reading order."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A map of the code", 1)[1].split("\n## ", 1)[0]
    modules = []
    for line in section.splitlines():
        if line.startswith("| `"):
            where = line.split("|")[1]
            modules += [path.removesuffix("/").removesuffix(".py").replace("/", ".")
                        for path in re.findall(r"`([^`]+)`", where) if path.startswith(("graphs/", "console/"))]
    return modules


def _map_rows() -> dict[str, str]:
    """Each package of graphs/ the README's map names in a row's first column (migrations aside: written by
    makemigrations), as a folder path, with what that row's second column says lives there."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A map of the code", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `graphs/"):
            where, what = line.split("|")[1:3]
            rows |= {path: what for path in re.findall(r"`(graphs/[a-z_]+/)`", where) if path != "graphs/migrations/"}
    return rows


def _unnamed_in_row(package: Path, what: str) -> list[str]:
    """The modules and sub-packages of ``package`` its row does not name (as `name`, `name.py` or `name/`)."""
    children = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    children |= {path.parent.name for path in package.glob("*/__init__.py")}
    named = set(re.findall(r"`([a-z_]+)(?:\.py|/)?`", what))
    return sorted(children - named)


def _graphs_children() -> set[str]:
    package = ROOT / "graphs"
    modules = {f"graphs.{path.stem}" for path in package.glob("*.py") if path.name != "__init__.py"}
    return modules | {f"graphs.{path.parent.name}" for path in package.glob("*/__init__.py")}


def test_the_contract_puts_every_module_of_graphs_on_a_layer():
    assert set().union(*_graphs_layers()) == _graphs_children()


def test_the_readme_map_lists_the_layers_of_graphs_in_the_contracts_order():
    layer_of = {module: index for index, layer in enumerate(_graphs_layers()) for module in layer}
    listed = [module for module in _map_modules() if module.startswith("graphs.")]

    assert sorted(listed) == sorted(layer_of), "the map names each module of the contract once"
    out_of_order = [(lower, higher) for lower, higher in pairwise(listed) if layer_of[lower] > layer_of[higher]]
    assert out_of_order == [], "the map lists these before a module of a layer below them"


def test_the_readme_map_names_every_module_of_each_package_of_graphs_in_its_row():
    rows = _map_rows()
    packages = {f"{path.parent.relative_to(ROOT).as_posix()}/" for path in (ROOT / "graphs").glob("*/__init__.py")}

    assert set(rows) == packages - {"graphs/migrations/"}
    assert {path: _unnamed_in_row(ROOT / path, what) for path, what in rows.items()} == {path: [] for path in rows}


def test_a_module_left_out_of_its_packages_row_is_found(tmp_path):
    for name in ("listed", "forgotten", "base"):
        (tmp_path / f"{name}.py").write_text("")

    assert _unnamed_in_row(tmp_path, " `listed` (named), `base.py` (named as a file) ") == ["forgotten"]


def test_the_readme_map_puts_console_above_graphs_as_the_contract_does():
    assert _contract("console-over-graphs")["layers"] == ["console", "graphs"]
    listed = _map_modules()
    assert listed.index("console") > max(i for i, module in enumerate(listed) if module.startswith("graphs."))


def test_no_import_runs_up_the_layers():
    linter = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(linter), "--no-logo", "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)

    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_of_source_or_tests_is_over_400_lines():
    too_long = {}
    for folder, suffixes in LIMITED.items():
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if path.suffix in suffixes and not relative.startswith(tuple(LIMIT_ASIDE)):
                lines = len(path.read_text().splitlines())
                if lines > MAX_LINES:
                    too_long[relative] = lines

    assert too_long == {}
