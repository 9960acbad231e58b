"""Checking a loop-agent DAG spec before it is imported: one pass naming every problem, one line each.

What a spec is held to is told with its translation (graphs.planning.dag_spec_plan); the bounds on its
prompts and files are graphs.planning.dag_spec_bounds. Nothing is translated while a problem remains.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings

from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph, manifest_nodes
from graphs.errors import WorkGraphError
from graphs.planning.dag_spec_bounds import PLACEHOLDER, prompt_file_keys, prompt_files_problems, text_size

EXECUTORS = ("pi", "shell")
TOOL_PROFILES = manifest_nodes.TOOL_PROFILES
# The spec's retry categories, and the agent error kind each one is.
RETRY_CATEGORIES = {"timeout": "timeout", "network": "network", "rate-limit": "rate_limit",
                    "unavailable": "unavailable"}
BACKOFFS = ("exponential", "fixed")
# A spec's retryPolicy counts attempts, the first one included.
MAX_ATTEMPTS_LIMIT = manifest_nodes.RETRY_POLICY_MAX_RETRIES + 1
MAX_REVISION_ROUNDS = 5
# The only verdict a gate lets through: the console's verdict check passes on pass alone.
GATE_ACCEPT = "verdict: pass"
GATE_LINE_MODES = ("first-verdict-line",)
TASK_FIELDS = ("id", "role", "outputContract", "writeSet", "allowedPaths", "forbiddenPaths", "writePolicy")
SPEC_MAX_BYTES = 2 * 1024 * 1024

# Markdown prompt files keep their instructions under this heading; the rest describes the template.
_PROMPT_BODY = re.compile(r"^##\s+Prompt Body\s*$", re.M | re.I)


class DagSpecError(WorkGraphError):
    """A spec that cannot be imported; ``errors`` names every problem, one line each."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("the DAG spec cannot be imported: " + "; ".join(self.errors))


def dag_spec_parse(text: str | bytes) -> dict[str, Any]:
    """The spec object in ``text``; DagSpecError when it is not one JSON object."""
    if len(text) > SPEC_MAX_BYTES:
        raise DagSpecError([f"the spec is {len(text)} bytes, over the limit of {SPEC_MAX_BYTES}"])
    try:
        spec = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise DagSpecError([f"the spec is not valid JSON: {error}"]) from None
    if not isinstance(spec, dict):
        raise DagSpecError(["the spec must be a JSON object with a tasks list"])
    return spec


def dag_spec_prompt_paths(spec: Mapping[str, Any]) -> list[str]:
    """The markdown prompt files the spec's tasks name (``subtask_prompt_markdown``), each once."""
    tasks = spec.get("tasks")
    if not isinstance(tasks, list):
        return []
    named = (task.get("subtask_prompt_markdown") for task in tasks if isinstance(task, dict))
    return list(dict.fromkeys(path for path in named if isinstance(path, str) and path.strip()))


def dag_spec_prompt_files_check(spec: Mapping[str, Any], *, sizes: Mapping[str, int]) -> None:
    """DagSpecError when a prompt file of ``sizes`` (name → bytes) is one no task of ``spec`` names or is
    over its bound: asked before the files are read, so a refused one is never read, let alone stored."""
    problems = prompt_files_problems(dag_spec_prompt_paths(spec), sizes)
    if problems:
        raise DagSpecError(problems)


class DagSpecCheck:
    """One pass over the spec collecting every error; graphs.planning.dag_spec_plan translates a spec without any."""

    def __init__(self, spec: Mapping[str, Any], prompt_files: Mapping[str, str]) -> None:
        self.spec = spec
        self.prompt_files = prompt_files
        self._errors: list[str] = []
        self.tasks: list[tuple[str, dict[str, Any]]] = []
        self.variables: dict[str, str] = {}
        self.prompts: dict[str, str] = {}
        # Prompt files over their bound: already named as a problem, so their tasks are not checked.
        self.refused: set[str] = set()

    def errors(self) -> list[str]:
        spec = self.spec
        tasks = spec.get("tasks")
        if not isinstance(tasks, list) or not tasks:
            return ["the spec needs a non-empty tasks list"]
        self._variables_check(spec.get("variables"))
        self._prompt_files_check()
        counts: dict[str, int] = {}
        for index, task in enumerate(tasks):
            if not isinstance(task, dict):
                self._errors.append(f"tasks[{index}]: must be an object")
                continue
            task_id = task.get("id")
            if not isinstance(task_id, str) or not task_id.strip():
                self._errors.append(f"tasks[{index}]: id must be a non-empty string")
                continue
            counts[task_id] = counts.get(task_id, 0) + 1
            if counts[task_id] == 2:
                self._errors.append(f"task {task_id!r}: the id is used by more than one task")
            if counts[task_id] == 1:
                self.tasks.append((task_id, task))
        for task_id, _ in self.tasks:
            if task_id.startswith(manifest_lib.RESERVED_PREFIX):
                self._errors.append(
                    f"task {task_id!r}: ids starting with {manifest_lib.RESERVED_PREFIX!r} are reserved"
                )
            elif len(task_id) > manifest_lib.FIELD_MAX_LENGTHS["node_id"]:
                limit = manifest_lib.FIELD_MAX_LENGTHS["node_id"]
                self._errors.append(f"task {task_id[:40]!r}…: the id is over {limit} characters")
        ids = {task_id for task_id, _ in self.tasks}
        for task_id, task in self.tasks:
            self._task_check(task_id, task, ids)
        self._cycles_check()
        return self._errors

    # - the parts ----------------------------------------------------------------------------------

    def _prompt_files_check(self) -> None:
        sizes = {name: text_size(text) for name, text in self.prompt_files.items()}
        problems = prompt_files_problems(dag_spec_prompt_paths(self.spec), sizes)
        self._errors.extend(problems)
        self.refused = {name for name, size in sizes.items()
                        if size > settings.WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES}

    def _variables_check(self, variables: Any) -> None:
        if variables is None:
            return
        if not isinstance(variables, dict) or not all(
            isinstance(key, str) and isinstance(value, str | int | float) and not isinstance(value, bool)
            for key, value in variables.items()
        ):
            self._errors.append("variables must be an object of names to strings or numbers")
            return
        self.variables = {key: str(value) for key, value in variables.items()}

    def _task_check(self, task_id: str, task: dict[str, Any], ids: set[str]) -> None:
        label = f"task {task_id!r}"
        executor = task.get("executor")
        if executor is None:
            self._errors.append(f"{label}: executor is missing; every task names its executor ({', '.join(EXECUTORS)})")
        elif executor not in EXECUTORS:
            self._errors.append(f"{label}: unknown executor {executor!r}; the console runs {', '.join(EXECUTORS)}")
        if "depends_on" in task and "dependsOn" in task:
            self._errors.append(f"{label}: has both depends_on and dependsOn; give one")
        deps = self._dependencies(task)
        if not isinstance(deps, list):
            self._errors.append(f"{label}: depends_on must be a list of task ids")
            deps = []
        for dep in deps:
            if not isinstance(dep, str):
                self._errors.append(f"{label}: depends_on must list task ids, not {dep!r}")
            elif dep == task_id:
                self._errors.append(f"{label}: depends on itself")
            elif dep not in ids:
                self._errors.append(f"{label}: depends on {dep!r}, which is not a task of the spec")
        profile = task.get("toolProfile")
        if profile is not None and profile not in TOOL_PROFILES:
            self._errors.append(f"{label}: toolProfile {profile!r} is not one of {', '.join(TOOL_PROFILES)}")
        for field in ("writeSet", "forbiddenPaths", "allowedPaths"):
            paths = task.get(field)
            globs_ok = isinstance(paths, list) and all(isinstance(p, str) and p.strip() for p in paths)
            if paths is not None and not globs_ok:
                self._errors.append(f"{label}: {field} must be a list of path globs")
        role = task.get("role")
        if role is not None and not (isinstance(role, str) and role.strip()
                                     and len(role) <= manifest_lib.FIELD_MAX_LENGTHS["subagent_type"]):
            self._errors.append(f"{label}: role must be a short non-empty string")
        if "retryPolicy" in task:
            self._retry_policy_check(label, task)
        if executor == "pi":
            self._pi_check(task_id, task, label)
        elif executor == "shell":
            self._shell_check(task_id, task, label, ids)
        if "revision" in task:
            self._revision_check(task_id, task, label, ids)

    def _retry_policy_check(self, label: str, task: dict[str, Any]) -> None:
        policy = task["retryPolicy"]
        if task.get("executor") != "pi":
            self._errors.append(f"{label}: retryPolicy belongs to pi tasks; a shell task runs no agent to retry")
        if task.get("toolProfile") == "write":
            self._errors.append(
                f"{label}: retryPolicy on a write task; a writer's side effects may already have happened, "
                "so it is never retried"
            )
        if not isinstance(policy, dict):
            self._errors.append(f"{label}: retryPolicy must be an object")
            return
        attempts = policy.get("maxAttempts")
        if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= MAX_ATTEMPTS_LIMIT:
            self._errors.append(
                f"{label}: retryPolicy.maxAttempts must be an integer from 1 to {MAX_ATTEMPTS_LIMIT}, not {attempts!r}"
            )
        backoff = policy.get("backoff", "exponential")
        if backoff not in BACKOFFS:
            self._errors.append(f"{label}: retryPolicy.backoff {backoff!r} is not one of {', '.join(BACKOFFS)}")
        limit_ms = manifest_nodes.RETRY_POLICY_MAX_DELAY_SECONDS * 1000
        for field in ("initialDelayMs", "maxDelayMs"):
            value = policy.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not 0 <= value <= limit_ms):
                self._errors.append(f"{label}: retryPolicy.{field} must be a number of milliseconds from 0 to "
                                    f"{limit_ms}, not {value!r}")
        categories = policy.get("retryCategories")
        if categories is not None:
            if not isinstance(categories, list) or not categories:
                self._errors.append(f"{label}: retryPolicy.retryCategories must be a non-empty list")
            else:
                for category in categories:
                    if category not in RETRY_CATEGORIES:
                        self._errors.append(
                            f"{label}: retryPolicy.retryCategories names {category!r}, which is not a transient "
                            f"error; retried are only {', '.join(RETRY_CATEGORIES)}"
                        )
        unknown = set(policy) - {"maxAttempts", "backoff", "initialDelayMs", "maxDelayMs", "retryCategories"}
        if unknown:
            self._errors.append(f"{label}: retryPolicy has unknown fields {', '.join(sorted(map(str, unknown)))}")

    def _pi_check(self, task_id: str, task: dict[str, Any], label: str) -> None:
        if "shell" in task:
            self._errors.append(f"{label}: a pi task takes no shell block")
        if "subtask_prompt-markdown" in task:
            self._errors.append(f"{label}: subtask_prompt-markdown is not a field; write subtask_prompt_markdown")
        inline, markdown = task.get("subtask_prompt"), task.get("subtask_prompt_markdown")
        if inline is not None and markdown is not None:
            self._errors.append(f"{label}: has both subtask_prompt and subtask_prompt_markdown; give one")
            return
        if inline is None and markdown is None:
            self._errors.append(f"{label}: needs a prompt: subtask_prompt or subtask_prompt_markdown")
            return
        if inline is not None:
            if not isinstance(inline, str) or not inline.strip():
                self._errors.append(f"{label}: subtask_prompt must be non-empty text")
                return
            template = inline
        else:
            found = self._prompt_file(markdown)
            if found is None:
                self._errors.append(
                    f"{label}: its prompt file {markdown!r} was not supplied; upload it with the spec"
                )
                return
            if found[0] in self.refused:
                return
            template = _prompt_body(found[1])
        self.prompts[task_id] = template
        # Each name once: a placeholder repeated 100,000 times is one problem, not 100,000.
        for name in dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(template)):
            problem = self._placeholder_problem(name, task)
            if problem:
                self._errors.append(f"{label}: placeholder {{{{{name}}}}} {problem}")

    def _prompt_file(self, path: Any) -> tuple[str, str] | None:
        """The name and text of the prompt file a task names by ``path``, or None when none was supplied."""
        if not isinstance(path, str) or not path.strip():
            return None
        for key in prompt_file_keys(path):
            text = self.prompt_files.get(key)
            if isinstance(text, str):
                return key, text
        return None

    def _placeholder_problem(self, name: str, task: dict[str, Any]) -> str | None:
        """Why ``{{name}}`` cannot be filled in for ``task``, or None when it can."""
        head, _, rest = name.partition(".")
        if name in ("title", "objective"):
            return None
        if head == "var":
            return None if rest in self.variables else "names no variable of the spec's variables"
        if head == "task":
            return None if rest in TASK_FIELDS else f"is unknown; task fields are {', '.join(TASK_FIELDS)}"
        if head == "upstream":
            deps = self._dependencies(task)
            if isinstance(deps, list) and rest in deps:
                return None
            return "names a task this one does not depend on directly; only those outputs reach it"
        return "is unknown; use title, objective, var.<name>, task.<field> or upstream.<task id>"

    def _shell_check(self, task_id: str, task: dict[str, Any], label: str, ids: set[str]) -> None:
        shell = task.get("shell")
        if not isinstance(shell, dict):
            self._errors.append(f"{label}: a shell task needs a shell block with commands or a verdictGate")
            return
        commands, gate = shell.get("commands") or [], shell.get("verdictGate")
        if not isinstance(commands, list) or not all(isinstance(c, str) and c.strip() for c in commands):
            self._errors.append(f"{label}: shell.commands must be a list of command lines")
            return
        if commands and gate is not None:
            self._errors.append(f"{label}: has both shell.commands and a verdictGate; a shell task does one")
        elif not commands and gate is None:
            self._errors.append(f"{label}: a shell task needs shell.commands or a shell.verdictGate")
        elif any("\x00" in c for c in commands):
            self._errors.append(f"{label}: shell.commands contain a NUL character")
        timeout = shell.get("timeoutMs")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1):
            self._errors.append(f"{label}: shell.timeoutMs must be a positive integer, not {timeout!r}")
        cwd = shell.get("cwd", ".")
        if not isinstance(cwd, str) or not cwd or PurePosixPath(cwd).is_absolute() or ".." in PurePosixPath(cwd).parts:
            self._errors.append(f"{label}: shell.cwd must be a folder inside the working folder, not {cwd!r}")
        if gate is not None:
            self._gate_check(task_id, task, gate, label, ids)

    def _gate_check(self, task_id: str, task: dict[str, Any], gate: Any, label: str, ids: set[str]) -> None:
        if not isinstance(gate, dict):
            self._errors.append(f"{label}: shell.verdictGate must be an object")
            return
        source = gate.get("fromNodeId")
        if not isinstance(source, str) or source not in ids:
            self._errors.append(f"{label}: verdictGate.fromNodeId {source!r} is not a task of the spec")
        elif self._dependencies(task) != [source]:
            self._errors.append(
                f"{label}: a verdict gate reads one task's output, so it depends on exactly its fromNodeId "
                f"{source!r}"
            )
        accept = gate.get("accept")
        if not (isinstance(accept, list) and len(accept) == 1 and isinstance(accept[0], str)
                and " ".join(accept[0].split()).lower() == GATE_ACCEPT):
            self._errors.append(
                f"{label}: verdictGate.accept must be ['VERDICT: pass'], not {accept!r}; a gate lets only a "
                "pass through"
            )
        mode = gate.get("lineMode", GATE_LINE_MODES[0])
        if mode not in GATE_LINE_MODES:
            self._errors.append(
                f"{label}: verdictGate.lineMode {mode!r} is not supported; the gate reads the first VERDICT: "
                "line (first-verdict-line)"
            )

    def _revision_check(self, task_id: str, task: dict[str, Any], label: str, ids: set[str]) -> None:
        revision = task["revision"]
        if task.get("executor") != "shell":
            self._errors.append(
                f"{label}: revision belongs to a shell task (a gate or a check), whose failure it revises"
            )
        if not isinstance(revision, dict):
            self._errors.append(f"{label}: revision must be an object with loopBackTo and maxRounds")
            return
        target, rounds = revision.get("loopBackTo"), revision.get("maxRounds")
        if not isinstance(target, str) or target not in ids:
            self._errors.append(f"{label}: revision.loopBackTo {target!r} is not a task of the spec")
        elif target not in self._upstream(task_id):
            self._errors.append(f"{label}: revision.loopBackTo {target!r} is not upstream of this task")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_REVISION_ROUNDS:
            self._errors.append(
                f"{label}: revision.maxRounds must be an integer from 1 to {MAX_REVISION_ROUNDS}, not {rounds!r}"
            )

    def _cycles_check(self) -> None:
        try:
            manifest_graph.topological_order(self._skeleton())
        except manifest_lib.ManifestError as error:
            self._errors.extend(error.errors)

    # - graph helpers ------------------------------------------------------------------------------

    @staticmethod
    def _dependencies(task: Mapping[str, Any]) -> Any:
        deps = task.get("depends_on", task.get("dependsOn", []))
        return [] if deps is None else deps

    def _skeleton(self) -> dict[str, Any]:
        ids = {task_id for task_id, _ in self.tasks}
        nodes = [
            {"node_id": task_id,
             "depends_on": [d for d in self._dependencies(task) if isinstance(d, str) and d in ids and d != task_id]
             if isinstance(self._dependencies(task), list) else []}
            for task_id, task in self.tasks
        ]
        return {"nodes": nodes, "edges": []}

    def _upstream(self, task_id: str) -> set[str]:
        try:
            return manifest_graph.upstream_of(self._skeleton(), task_id)
        except (KeyError, manifest_lib.ManifestError):
            return set()


def _prompt_body(markdown: str) -> str:
    """The instructions of a markdown prompt file: what follows its ``## Prompt Body`` heading when it
    has one (what comes before describes the template to its authors), else the whole file. The body
    runs to the end: its own report templates hold headings of every level, inside fences."""
    heading = _PROMPT_BODY.search(markdown)
    return markdown[heading.end():].strip() if heading else markdown
