"""Translating a loop-agent DAG spec into a ``graph_manifest``, once graphs.planning.dag_spec_check passes it.

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

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings

from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_nodes
from graphs.planning.dag_spec_bounds import import_base_size, prompt_filled, text_size
from graphs.planning.dag_spec_check import RETRY_CATEGORIES, DagSpecCheck, DagSpecError

# The mechanical check that judges a gate node: it reads the first VERDICT: line of the task it gates.
GATE_CHECK = "verdict_says_pass"
# A pi task that a verdict gate reads: the offline agent answers it with a verdict line.
VERDICT_NODE_TYPE = "review_verdict"
GATE_NODE_TYPE = "verdict_gate"


@dataclass(frozen=True)
class DagSpecPlan:
    """What a valid spec becomes: the task's fields and the run's manifest."""

    title: str
    goal_text: str
    acceptance_criteria: list[str]
    constraints: list[str]
    manifest: dict[str, Any]


def dag_spec_plan(spec: Mapping[str, Any], *, prompt_files: Mapping[str, str] | None = None) -> DagSpecPlan:
    """Check ``spec`` and translate it; DagSpecError naming every problem when it cannot be imported.

    ``prompt_files`` holds the text of the markdown prompts its tasks name (``subtask_prompt_markdown``),
    keyed by the path the task names or by the file's name alone. The prompts are filled in, within
    their bounds, once the spec has no other problem: filling in needs its placeholders to be valid.
    """
    checked = _Translation(spec, prompt_files or {})
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


class _Translation(DagSpecCheck):
    """A spec checked, then translated: its pi tasks' prompts filled in (``prompts_fill``), then its manifest."""

    def __init__(self, spec: Mapping[str, Any], prompt_files: Mapping[str, str]) -> None:
        super().__init__(spec, prompt_files)
        # The pi tasks' prompts with their placeholders filled in (prompts_fill), for the manifest.
        self.filled: dict[str, str] = {}

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
    cap = float(policy.get("maxDelayMs", manifest_nodes.RETRY_POLICY_MAX_DELAY_SECONDS * 1000)) / 1000
    if policy.get("backoff", "exponential") == "fixed":
        delays = [min(initial, cap)]
    else:
        delays = [min(initial * 2**retry, cap) for retry in range(max(retries, 1))]
    translated: dict[str, Any] = {"max_retries": retries, "delays_seconds": delays}
    if policy.get("retryCategories"):
        translated["kinds"] = sorted({RETRY_CATEGORIES[category] for category in policy["retryCategories"]})
    return translated


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str) and item.strip()] if isinstance(value, list) else []


def _cwd_entry(cwd: str) -> str:
    """The lines that enter a shell task's ``cwd`` with every symlink resolved, refusing a folder that
    leaves the working folder (through a symlink an upstream agent committed) before anything runs."""
    refusal = 'echo "shell.cwd leaves the working folder: $(pwd -P)" >&2; exit 2'
    return f'top=$(pwd -P)\ncd -P -- {shlex.quote(cwd)}\ncase "$(pwd -P)/" in "$top"/*) ;; *) {refusal} ;; esac'
