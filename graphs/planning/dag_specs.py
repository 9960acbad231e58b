"""Importing a loop-agent DAG spec: check it, translate it into a ``graph_manifest``, create its run.

A spec (``tasks[]`` of ``pi`` and ``shell`` tasks with ``depends_on``, prompts, verdict gates, retry
policies and revision rounds) is checked as a whole first: every problem is named at once, and nothing
is written while any remains. The translation, task by task:

- ``pi`` → a generic node whose ``task_prompt`` is the task's prompt with its placeholders filled in,
  run by the org node named by its ``role``; ``toolProfile`` → ``tool_profile``; ``writeSet`` and
  ``forbiddenPaths`` → ``write_set`` and ``forbidden_paths`` (audited against the attempt's diff);
  ``retryPolicy`` → ``retry_policy``.
- ``shell`` with ``commands`` → a command node running them, one per line, under ``sh -e`` in the
  attempt's folder (the run's worktree when the project's folder is a git repository).
- ``shell`` with a ``verdictGate`` → a gate node fed by a ``zero_token`` edge from the task it reads and
  judged by ``verdict_says_pass``: no agent and no program runs, the first ``VERDICT:`` line decides.
- ``revision`` (``{"loopBackTo": <upstream task>, "maxRounds": n}``) on a shell task → ``on_fail``
  ``loop_back`` to that task, at most ``n`` times; without it a failing shell task fails the run.

Placeholders are ``{{name}}``: ``title``, ``objective``, ``var.<name>`` (the spec's ``variables``),
``task.<field>`` (the task's own ``id``, ``role``, ``outputContract``, ``writeSet``, ``allowedPaths``,
``forbiddenPaths``, ``writePolicy``) and ``upstream.<task id>`` for a task it depends on directly: that
task's output is handed to the node under its inputs when it runs, so the placeholder names it there.

What an import stores is bounded (graphs.planning.dag_spec_bounds): each prompt file, each task's prompt with its
placeholders filled in, and the whole import; past a bound the import is refused, naming what and how big.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.storable import storable
from graphs.errors import WorkGraphError
from graphs.models import DagSpec, Project, Task, WorkGraphRun, WorkNodeExecution, planning_node_id
from graphs.planning.dag_spec_bounds import (
    PLACEHOLDER,
    import_base_size,
    prompt_file_keys,
    prompt_files_problems,
    prompt_filled,
    text_size,
)
from graphs.planning.intake import task_create
from graphs.runs.status import run_status_set, task_claim_for_new_run, task_status_refresh

EXECUTORS = ("pi", "shell")
TOOL_PROFILES = manifest_lib.TOOL_PROFILES
# The spec's retry categories, and the agent error kind each one is.
RETRY_CATEGORIES = {"timeout": "timeout", "network": "network", "rate-limit": "rate_limit",
                    "unavailable": "unavailable"}
BACKOFFS = ("exponential", "fixed")
# A spec's retryPolicy counts attempts, the first one included.
MAX_ATTEMPTS_LIMIT = manifest_lib.RETRY_POLICY_MAX_RETRIES + 1
MAX_REVISION_ROUNDS = 5
# The only verdict a gate lets through: the console's verdict check passes on pass alone.
GATE_ACCEPT = "verdict: pass"
GATE_LINE_MODES = ("first-verdict-line",)
GATE_CHECK = "verdict_says_pass"
# A pi task that a verdict gate reads: the offline agent answers it with a verdict line.
VERDICT_NODE_TYPE = "review_verdict"
GATE_NODE_TYPE = "verdict_gate"
TASK_FIELDS = ("id", "role", "outputContract", "writeSet", "allowedPaths", "forbiddenPaths", "writePolicy")
SPEC_MAX_BYTES = 2 * 1024 * 1024
# The org node an import's planning record names, and that owns the nodes no role runs (gates, commands).
IMPORT_ORG_NODE = "dag_spec"

# Markdown prompt files keep their instructions under this heading; the rest describes the template.
_PROMPT_BODY = re.compile(r"^##\s+Prompt Body\s*$", re.M | re.I)


class DagSpecError(WorkGraphError):
    """A spec that cannot be imported; ``errors`` names every problem, one line each."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("the DAG spec cannot be imported: " + "; ".join(self.errors))


@dataclass(frozen=True)
class DagSpecPlan:
    """What a valid spec becomes: the task's fields and the run's manifest."""

    title: str
    goal_text: str
    acceptance_criteria: list[str]
    constraints: list[str]
    manifest: dict[str, Any]


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


def dag_spec_plan(spec: Mapping[str, Any], *, prompt_files: Mapping[str, str] | None = None) -> DagSpecPlan:
    """Check ``spec`` and translate it; DagSpecError naming every problem when it cannot be imported.

    ``prompt_files`` holds the text of the markdown prompts its tasks name (``subtask_prompt_markdown``),
    keyed by the path the task names or by the file's name alone. The prompts are filled in, within
    their bounds, once the spec has no other problem: filling in needs its placeholders to be valid.
    """
    checked = _Checker(spec, prompt_files or {})
    errors = checked.errors() or checked.prompts_fill()
    if errors:
        raise DagSpecError(errors)
    manifest = checked.manifest()
    try:
        manifest_lib.validate_graph_manifest(
            manifest, max_nodes=settings.WORKGRAPH_MAX_NODES, max_depth=settings.WORKGRAPH_MAX_DEPTH
        )
    except manifest_lib.ManifestError as error:
        raise DagSpecError([f"the translated graph: {problem}" for problem in error.errors]) from None
    title = _text(spec.get("title")) or "Imported DAG spec"
    return DagSpecPlan(
        title=title[:200],
        goal_text=_text(spec.get("objective")) or title,
        acceptance_criteria=_strings(spec.get("successCriteria")),
        constraints=_strings(spec.get("globalConstraints")),
        manifest=manifest,
    )


def dag_spec_import(
    *,
    project: Project,
    spec: Mapping[str, Any],
    prompt_files: Mapping[str, str] | None = None,
    source_name: str = "",
    imported_by: AbstractBaseUser | None = None,
) -> WorkGraphRun:
    """Create a task and its planned run from ``spec``, keeping the spec on the run.

    The run is ``awaiting_approval`` when the project requires plan approval, else ``ready``. The import
    is recorded as the run's planning node, as a planning call would be, so the planning inspector shows
    a reviewer the spec and the manifest made from it. All of it is written in one transaction, after
    the whole spec was checked: an invalid spec (DagSpecError) writes nothing.
    """
    plan = dag_spec_plan(spec, prompt_files=prompt_files)
    with transaction.atomic():
        task = task_create(
            project=project, created_by=imported_by, title=plan.title, goal_text=plan.goal_text,
            acceptance_criteria=plan.acceptance_criteria, constraints=plan.constraints,
            task_type=Task.TaskType.WORKFLOW, workflow_id=plan.title,
        )
        task_claim_for_new_run(task_id=task.pk)
        run = WorkGraphRun.objects.create(
            task=task, status=WorkGraphRun.Status.PLANNING, graph_manifest=storable(plan.manifest),
            manifest_version=1, max_cost_usd=project.max_run_cost_usd,
        )
        DagSpec.objects.create(run=run, source_name=source_name[:255], spec=storable(dict(spec)),
                               prompt_files=storable(dict(prompt_files or {})), imported_by=imported_by)
        _planning_record(run=run, spec=spec, manifest=plan.manifest, source_name=source_name)
        planned = (WorkGraphRun.Status.AWAITING_APPROVAL if project.require_plan_approval
                   else WorkGraphRun.Status.READY)
        run_status_set(run=run, status=planned)
        task_status_refresh(task_id=task.pk)
    return run


def dag_spec_run_warnings(run: WorkGraphRun) -> list[str]:
    """What the imported run cannot do as its project stands: its command nodes, in a project that does
    not allow commands, fail ``commands_disabled`` without running. Empty when nothing stands in its way."""
    if run.task.project.allow_commands:
        return []
    commands = [entry["node_id"] for entry in manifest_lib.manifest_commands(run.graph_manifest)]
    if not commands:
        return []
    return [
        f"the project does not allow commands, so the shell tasks {', '.join(commands)} will fail "
        "(commands_disabled) without running; a project admin can turn on allow_commands for the project"
    ]


def _planning_record(*, run: WorkGraphRun, spec: Mapping[str, Any], manifest: dict[str, Any],
                     source_name: str) -> WorkNodeExecution:
    """The run's ``__planning__`` node for an import: the spec where an agent's response would be."""
    now = timezone.now()
    return WorkNodeExecution.objects.create(
        run=run, node_id=planning_node_id(), subagent_type=IMPORT_ORG_NODE, attempt=1,
        cause=WorkNodeExecution.Cause.PLANNING, status=WorkNodeExecution.Status.SUCCEEDED,
        ready_at=now, started_at=now, finished_at=now,
        input_payload={"org_node": IMPORT_ORG_NODE, "prompt": "", "append": False,
                       "imported_from": source_name or "a DAG spec"},
        output_payload=storable({
            "raw_response": json.dumps(spec, indent=2, ensure_ascii=False), "repair_prompt": None,
            "repair_response": None, "extracted_manifest": None, "manifest": manifest,
            "normalization_notes": [], "validation_errors": [],
            "new_node_ids": manifest_graph.manifest_node_ids(manifest), "usage": [], "agent_calls": [],
        }),
    )


def run_dag_spec(run: WorkGraphRun) -> DagSpec | None:
    """The spec ``run`` was imported from — a fork's is its origin's — or None when it was planned."""
    seen: set[Any] = set()
    current: WorkGraphRun | None = run
    while current is not None and current.pk not in seen:
        seen.add(current.pk)
        found = DagSpec.objects.filter(run_id=current.pk).first()
        if found is not None or current.forked_from_id is None:
            return found
        current = WorkGraphRun.objects.filter(pk=current.forked_from_id).only("run_id", "forked_from_id").first()
    return None


def dag_spec_download(spec: DagSpec) -> tuple[bytes, str]:
    """The spec as a JSON file to download: its bytes and a file name."""
    name = PurePosixPath(spec.source_name).name if spec.source_name else ""
    if not name.lower().endswith(".json"):
        name = f"dag-spec-{spec.run_id}.json"
    return (json.dumps(spec.spec, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), name


# --- checking and translating ----------------------------------------------------------------------


class _Checker:
    """One pass over the spec collecting every error; ``manifest`` translates a spec without any."""

    def __init__(self, spec: Mapping[str, Any], prompt_files: Mapping[str, str]) -> None:
        self.spec = spec
        self.prompt_files = prompt_files
        self._errors: list[str] = []
        self.tasks: list[tuple[str, dict[str, Any]]] = []
        self.variables: dict[str, str] = {}
        self.prompts: dict[str, str] = {}
        # The pi tasks' prompts with their placeholders filled in (prompts_fill), for the manifest.
        self.filled: dict[str, str] = {}
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
        limit_ms = manifest_lib.RETRY_POLICY_MAX_DELAY_SECONDS * 1000
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

    # - translation --------------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        gated = {task["shell"]["verdictGate"]["fromNodeId"] for _, task in self.tasks
                 if task["executor"] == "shell" and task["shell"].get("verdictGate") is not None}
        nodes, edges = [], []
        for task_id, task in self.tasks:
            deps = list(self._dependencies(task))
            if task["executor"] == "pi":
                node = self._pi_node(task_id, task, deps, verdict=task_id in gated)
                edge_type = "needs_judgment"
            elif task["shell"].get("verdictGate") is not None:
                node = self._gate_node(task_id, task, deps)
                edge_type = "zero_token"
            else:
                node = self._command_node(task_id, task, deps)
                edge_type = "needs_judgment"
            edges.extend({"from": dep, "to": task_id, "edge_type": edge_type} for dep in deps)
            revision = task.get("revision")
            if revision is not None:
                node["on_fail"] = {"action": "loop_back", "max_attempts": revision["maxRounds"] + 1}
                edges.append({"from": task_id, "to": revision["loopBackTo"], "edge_type": "on_failure"})
            elif task["executor"] == "shell":
                node["on_fail"] = {"action": "hard_fail"}
            nodes.append(node)
        return {"nodes": nodes, "edges": edges}

    def _pi_node(self, task_id: str, task: dict[str, Any], deps: list[str], *, verdict: bool) -> dict[str, Any]:
        node: dict[str, Any] = {"node_id": task_id, "depends_on": deps,
                                "task_prompt": self.filled[task_id],
                                "tool_profile": task.get("toolProfile", "read")}
        if task.get("role"):
            node["subagent_type"] = task["role"]
        node["node_type"] = VERDICT_NODE_TYPE if verdict else (task.get("role") or "pi")
        if task.get("writeSet"):
            node["write_set"] = list(task["writeSet"])
        if task.get("forbiddenPaths"):
            node["forbidden_paths"] = list(task["forbiddenPaths"])
        if "retryPolicy" in task:
            node["retry_policy"] = _retry_policy(task["retryPolicy"])
        return node

    def _gate_node(self, task_id: str, task: dict[str, Any], deps: list[str]) -> dict[str, Any]:
        gate = task["shell"]["verdictGate"]
        what = gate.get("label") or gate["fromNodeId"]
        return {
            "node_id": task_id, "depends_on": deps, "node_type": GATE_NODE_TYPE,
            # Never sent to an agent (the node only aggregates): it says on the page what the gate does.
            "task_prompt": f"Verdict gate for {what}: passes only when the first VERDICT: line of "
                           f"{gate['fromNodeId']} says pass.",
            "judgment": {"kind": "mechanical", "check_ref": GATE_CHECK},
        }

    def _command_node(self, task_id: str, task: dict[str, Any], deps: list[str]) -> dict[str, Any]:
        shell = task["shell"]
        script = "\n".join(shell["commands"])
        cwd = shell.get("cwd", ".")
        if PurePosixPath(cwd) != PurePosixPath("."):
            script = f"{_cwd_entry(cwd)}\n{script}"
        node: dict[str, Any] = {"node_id": task_id, "depends_on": deps, "command": ["sh", "-e", "-c", script],
                                "node_type": "shell"}
        if shell.get("timeoutMs") is not None:
            node["timeout_seconds"] = max(1, math.ceil(shell["timeoutMs"] / 1000))
        if task.get("writeSet"):
            node["write_set"] = list(task["writeSet"])
        if task.get("forbiddenPaths"):
            node["forbidden_paths"] = list(task["forbiddenPaths"])
        return node

    def prompts_fill(self) -> list[str]:
        """Fill in each pi task's prompt into ``filled``; the problems of the prompts past their bound and
        of an import past its own. Once the import is past its bound no further prompt is filled in."""
        prompt_max = settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES
        import_max = settings.WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES
        stored, past, problems = import_base_size(self.spec, self.prompt_files), None, []
        for task_id, task in self.tasks:
            if stored > import_max:
                break
            if task_id not in self.prompts:
                continue
            prompt, size = self._prompt(task_id, task, limit=min(prompt_max, import_max - stored))
            stored += size
            if size > prompt_max:
                problems.append(f"task {task_id!r}: its prompt is {size:,} bytes with its placeholders filled in, "
                                f"over the limit of {prompt_max:,} (WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES)")
            if stored > import_max:
                past = task_id
            if prompt is not None:
                self.filled[task_id] = prompt
        if stored > import_max:
            problems.append(
                f"the import would store at least {stored:,} bytes (the spec, its prompt files and its tasks' "
                f"prompts), over the limit of {import_max:,} (WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES); "
                + (f"the prompt of task {past!r} takes it past" if past else "the spec and its prompt files alone do")
            )
        return problems

    def _prompt(self, task_id: str, task: dict[str, Any], *, limit: int) -> tuple[str | None, int]:
        """The task's prompt and its size; the prompt is None when the size is over ``limit``."""

        def value_of(name: str) -> str:
            head, _, rest = name.partition(".")
            if name in ("title", "objective"):
                return _text(self.spec.get(name))
            if head == "var":
                return self.variables[rest]
            if head == "task":
                value = task_id if rest == "id" else task.get(rest, "")
                return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            return f"the output of `{rest}` (under “Outputs of the nodes this one depends on” below)"

        extra = []
        if _text(task.get("outputContract")):
            extra.append(f"Output contract: {_text(task['outputContract'])}")
        if task.get("writeSet"):
            extra.append("Write only inside: " + ", ".join(task["writeSet"]))
        elif task.get("toolProfile", "read") == "read":
            extra.append("Read-only: do not change any file.")
        extra_size = sum(text_size(part) + len("\n\n") for part in extra)
        body, size = prompt_filled(self.prompts[task_id], value_of, limit=limit - extra_size)
        if body is None:
            return None, size + extra_size
        prompt = "\n\n".join([body.strip(), *extra])
        return prompt, text_size(prompt)


def _retry_policy(policy: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's retry_policy for a spec's retryPolicy: attempts become retries, milliseconds seconds."""
    retries = policy["maxAttempts"] - 1
    initial = float(policy.get("initialDelayMs", 2000)) / 1000
    cap = float(policy.get("maxDelayMs", manifest_lib.RETRY_POLICY_MAX_DELAY_SECONDS * 1000)) / 1000
    if policy.get("backoff", "exponential") == "fixed":
        delays = [min(initial, cap)]
    else:
        delays = [min(initial * 2**retry, cap) for retry in range(max(retries, 1))]
    translated: dict[str, Any] = {"max_retries": retries, "delays_seconds": delays}
    if policy.get("retryCategories"):
        translated["kinds"] = sorted({RETRY_CATEGORIES[category] for category in policy["retryCategories"]})
    return translated


def _prompt_body(markdown: str) -> str:
    """The instructions of a markdown prompt file: what follows its ``## Prompt Body`` heading when it
    has one (what comes before describes the template to its authors), else the whole file. The body
    runs to the end: its own report templates hold headings of every level, inside fences."""
    heading = _PROMPT_BODY.search(markdown)
    return markdown[heading.end():].strip() if heading else markdown


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str) and item.strip()] if isinstance(value, list) else []


def _cwd_entry(cwd: str) -> str:
    """The lines that enter a shell task's ``cwd`` with every symlink resolved, refusing a folder that
    leaves the working folder (through a symlink an upstream agent committed) before anything runs."""
    refusal = 'echo "shell.cwd leaves the working folder: $(pwd -P)" >&2; exit 2'
    return f'top=$(pwd -P)\ncd -P -- {shlex.quote(cwd)}\ncase "$(pwd -P)/" in "$top"/*) ;; *) {refusal} ;; esac'
