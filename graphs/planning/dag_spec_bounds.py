"""How much text a DAG spec import may store: each task's prompt, each prompt file and the whole import.

Specs are written by agents too, and agents are untrusted. Unbounded, a 0.9 MB spec repeating a
placeholder 100,000 times became a 100-million-character prompt, stored twice, and an upload the spec
never named was stored whole. So a prompt is filled in piece by piece and stops growing as soon as it
passes its bound (the rest is only counted, from the sizes of the template's pieces and of the values,
so the error can say how big it would have been), and the files are checked by name and size before
anyone reads them. Sizes are UTF-8 bytes; the bounds are settings (WORKGRAPH_DAG_SPEC_*_MAX_BYTES).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def prompt_file_keys(path: str) -> tuple[str, ...]:
    """The names under which the prompt file a task names by ``path`` may be supplied: the path as
    written, without its leading ``./``, or the file's name alone (an upload keeps only that)."""
    pure = PurePosixPath(path)
    return (path, pure.as_posix().removeprefix("./"), pure.name)


def prompt_files_problems(named_paths: Iterable[str], sizes: Mapping[str, int]) -> list[str]:
    """Why prompt files of these ``sizes`` (name → bytes) cannot come with a spec whose tasks name
    ``named_paths``: one no task names, or one over WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES. Empty when
    they can. Only names and sizes are needed, so a caller asks before reading any file."""
    named = {key for path in named_paths for key in prompt_file_keys(path)}
    limit = settings.WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES
    problems = []
    for name, size in sizes.items():
        if name not in named:
            problems.append(f"prompt file {name!r}: no task of the spec names it in subtask_prompt_markdown, "
                            "so it is refused; supply only the prompt files the tasks name")
        elif size > limit:
            problems.append(f"prompt file {name!r}: it is {size:,} bytes, over the limit of {limit:,} "
                            "(WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES)")
    return problems


def import_base_size(spec: Mapping[str, Any], prompt_files: Mapping[str, str]) -> int:
    """The bytes an import stores before its tasks' prompts: the spec as JSON and its prompt files."""
    return text_size(json.dumps(spec, ensure_ascii=False)) + sum(map(text_size, prompt_files.values()))


def prompt_filled(template: str, value_of: Callable[[str], str], *, limit: int) -> tuple[str | None, int]:
    """``template`` with each ``{{name}}`` replaced by ``value_of(name)``, and the size of that text.

    The text is None when its size is over ``limit``: nothing is added once the pieces so far pass it,
    the rest is counted only. ``value_of`` is called once per name, however often the name is repeated.
    """
    values: dict[str, tuple[str, int]] = {}
    pieces: list[str] = []
    size, at = 0, 0

    def add(piece: str, piece_size: int) -> None:
        nonlocal size
        size += piece_size
        if size <= limit:
            pieces.append(piece)

    for match in PLACEHOLDER.finditer(template):
        literal = template[at:match.start()]
        add(literal, text_size(literal))
        name = match.group(1)
        if name not in values:
            value = value_of(name)
            values[name] = (value, text_size(value))
        add(*values[name])
        at = match.end()
    add(template[at:], text_size(template[at:]))
    return ("".join(pieces) if size <= limit else None), size


def text_size(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))
