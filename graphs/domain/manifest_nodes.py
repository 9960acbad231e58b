"""A manifest node's rules: its kind (an agent node, a command node or an external one), the limits of
its fields, the commands it runs, and every rule one node must keep on its own.

graphs.domain.manifest validates a whole manifest with ``node_errors``, then checks what involves
several nodes (ids, dependencies, edges, cycles, depth). What a judgment kind or an on_fail action
requires of a node is the kind's or action's own: these rules read their registries
(graphs.domain.judgments, graphs.domain.on_fail_actions).

No Django and no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.catalogs import ARTIFACT_TYPES
from graphs.domain.judgments import DEFAULT_JUDGMENT_KIND, JUDGMENT_KINDS, judgment_kind
from graphs.domain.judgments.command import validator_script_command
from graphs.domain.manifest_fields import choices, command_errors, is_id, timeout_errors
from graphs.domain.on_fail_actions import ON_FAIL_ACTIONS, on_fail_action

# The longest value of each field the console stores in a column of its own (a node's id on every
# attempt and loop-back, its org node, a promoted artifact's type, a skill's slug): a longer one
# could not be stored, so it is a validation error like any other.
FIELD_MAX_LENGTHS = {"node_id": 200, "subagent_type": 100, "skill_ref": 100, "node_type": 100}
PROMOTED_ARTIFACT_TYPE_MAX_LENGTH = 100
# A command node runs no agent, so the fields that steer one would be silently ignored on it: they are
# refused instead, as a planning slip the repair request can name.
COMMAND_NODE_AGENT_FIELDS = ("artifact_type", "task_prompt", "skill_ref", "allowed_tools", "max_turns",
                             "max_tool_iterations")
# ``executor: external``: the node waits for a collaboration report instead of calling an agent. Its
# reported output is judged in the report's request, so only the judgment kinds that say they fit
# (``JudgmentKind.external``) may judge it; the fields that steer an agent would be silently ignored,
# so they are refused.
EXECUTORS = ("agent", "external")
EXTERNAL_NODE_AGENT_FIELDS = ("allowed_tools", "max_turns", "max_tool_iterations")

# A node's tool_profile says whether its agent may have side effects (write) or only reads (read).
TOOL_PROFILES = ("read", "write")
# What a node's retry_policy may retry: the agents' transient kinds (graphs.agents.base.TRANSIENT_KINDS,
# which this module, free of Django, does not import; a test keeps the two equal).
RETRYABLE_KINDS = ("timeout", "network", "rate_limit", "unavailable")
# Bounds of a retry_policy, so one node cannot wait or retry without end.
RETRY_POLICY_MAX_RETRIES = 10
RETRY_POLICY_MAX_DELAY_SECONDS = 3600


def node_errors(node: dict[str, Any], label: str) -> list[str]:
    """Every rule ``node`` breaks on its own, each message starting with ``label`` (its id or index)."""
    errors = []
    depends_on = node.get("depends_on")
    if depends_on is not None and not (isinstance(depends_on, list) and all(is_id(d) for d in depends_on)):
        errors.append(f"{label}: depends_on must be a list of node_id strings")

    has_artifact, has_prompt = "artifact_type" in node, "task_prompt" in node
    if not is_command_node(node) and ("timeout_seconds" in node or "expect_exit" in node):
        errors.append(f"{label}: timeout_seconds and expect_exit belong to command nodes (nodes with a command)")
    errors.extend(_executor_errors(node, label))
    if is_command_node(node):
        errors.extend(_command_node_errors(node, label))
    elif has_artifact and has_prompt:
        errors.append(f"{label}: has both artifact_type and task_prompt; a node takes exactly one")
    elif not (has_artifact or has_prompt):
        errors.append(
            f"{label}: needs artifact_type (a catalog node), task_prompt (a generic node) or command (a command node)"
        )
    elif has_artifact and node["artifact_type"] not in ARTIFACT_TYPES:
        errors.append(
            f"{label}: artifact_type {node['artifact_type']!r} is not one of {choices(ARTIFACT_TYPES)}"
        )
    elif has_prompt and not (isinstance(node["task_prompt"], str) and node["task_prompt"].strip()):
        errors.append(f"{label}: task_prompt must be a non-empty string")

    judgment = node.get("judgment")
    if judgment is not None:
        if not isinstance(judgment, dict):
            errors.append(f"{label}: judgment must be an object")
        elif (kind := judgment_kind(judgment.get("kind"))) is None:
            errors.append(f"{label}: judgment.kind {judgment.get('kind')!r} is not one of {choices(JUDGMENT_KINDS)}")
        else:
            errors.extend(kind.errors(judgment, label))

    on_fail = node.get("on_fail")
    if on_fail is not None:
        if not isinstance(on_fail, dict):
            errors.append(f"{label}: on_fail must be an object")
        else:
            name, attempts = on_fail.get("action"), on_fail.get("max_attempts")
            action = on_fail_action(name)
            if action is None:
                errors.append(f"{label}: on_fail.action {name!r} is not one of {choices(ON_FAIL_ACTIONS)}")
            if attempts is not None and (
                isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1
            ):
                errors.append(f"{label}: on_fail.max_attempts must be a positive integer, not {attempts!r}")
            if action is not None:
                errors.extend(action.node_errors(node, label))

    for paths in ("write_set", "forbidden_paths"):
        globs = node.get(paths)
        if globs is not None and not (
            isinstance(globs, list) and all(isinstance(glob, str) and glob.strip() for glob in globs)
        ):
            errors.append(f"{label}: {paths} must be a list of path globs")

    tool_profile = node.get("tool_profile")
    if tool_profile is not None and tool_profile not in TOOL_PROFILES:
        errors.append(f"{label}: tool_profile {tool_profile!r} is not one of {choices(TOOL_PROFILES)}")
    if "retry_policy" in node:
        errors.extend(_retry_policy_errors(node["retry_policy"], f"{label}: retry_policy"))

    max_turns = node.get("max_turns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        errors.append(f"{label}: max_turns must be a positive integer, not {max_turns!r}")

    promotes = node.get("promotes_to_artifact")
    if promotes is not None and not (isinstance(promotes, dict) and is_id(promotes.get("artifact_type"))):
        errors.append(f"{label}: promotes_to_artifact must be an object with a non-empty artifact_type")
    elif promotes is not None and len(promotes["artifact_type"]) > PROMOTED_ARTIFACT_TYPE_MAX_LENGTH:
        errors.append(
            f"{label}: promotes_to_artifact.artifact_type is {len(promotes['artifact_type'])} characters, "
            f"over the limit of {PROMOTED_ARTIFACT_TYPE_MAX_LENGTH}"
        )
    for key in ("subagent_type", "skill_ref", "node_type"):
        if node.get(key) is not None and not is_id(node[key]):
            errors.append(f"{label}: {key} must be a non-empty string")
        elif node.get(key) is not None and len(node[key]) > FIELD_MAX_LENGTHS[key]:
            errors.append(
                f"{label}: {key} is {len(node[key])} characters, over the limit of {FIELD_MAX_LENGTHS[key]}"
            )
    return errors


def is_command_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is a command node: it runs its ``command`` instead of calling an agent."""
    return "command" in node


def is_external_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is done outside the engine (``executor: external``): it waits for a report."""
    return node.get("executor") == "external"


def _executor_errors(node: dict[str, Any], label: str) -> list[str]:
    executor = node.get("executor")
    if executor is not None and executor not in EXECUTORS:
        return [f"{label}: executor {executor!r} is not one of {choices(EXECUTORS)}"]
    if not is_external_node(node):
        return [f"{label}: deadline_seconds belongs to external nodes (executor: external)"] if (
            "deadline_seconds" in node) else []
    errors = [f"{label}: an external node runs no agent, so it takes no {field}"
              for field in EXTERNAL_NODE_AGENT_FIELDS if field in node]
    if is_command_node(node):
        errors.append(f"{label}: an external node runs no command; drop command or executor")
    judgment = node.get("judgment")
    name = judgment.get("kind", DEFAULT_JUDGMENT_KIND) if isinstance(judgment, dict) else None
    kind = judgment_kind(name)
    if name is not None and (kind is None or not kind.external):
        external = [known.name for known in JUDGMENT_KINDS.values() if known.external]
        errors.append(f"{label}: an external node's report is judged as it arrives, so its judgment.kind must be"
                      f" one of {choices(external)}, not {name!r}")
    elif kind is not None:
        errors.extend(kind.external_errors(judgment, label))
    errors.extend(timeout_errors(node.get("deadline_seconds"), f"{label}: deadline_seconds"))
    return errors


# How a validator's test script is marked among a node's commands, beside ``node`` and ``judgment``: it runs
# after the node's judgment passed, with the console's default timeout.
TEST_SCRIPT_RUNS_AS = "test_script"


def node_commands(node: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The commands ``node`` runs, as (``"node"`` or ``"judgment"``, argv): its own, and its judgment's."""
    commands = []
    if is_command_node(node):
        commands.append(("node", list(node["command"])))
    judgment = node.get("judgment")
    kind = judgment_kind(judgment.get("kind")) if isinstance(judgment, Mapping) else None
    if kind is not None and kind.runs_command:
        commands.append(("judgment", list(judgment.get("command") or [])))
    return commands


def node_commands_planned(
    node: Mapping[str, Any], *, org_node: str, manifest: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Every command ``node`` runs, planned by ``org_node`` in ``manifest``, as ``manifest_commands`` lists
    them: ``node_commands``, then a validator's test script (``runs_as`` ``test_script``), built by the
    function the engine runs it from (graphs.domain.judgments.command.validator_script_command)."""
    listed = [_command_listed(node, runs_as, argv) for runs_as, argv in node_commands(node)]
    script = validator_script_command(node, org_node=org_node, manifest=manifest)
    if script is not None:
        listed.append(_command_listed(node, TEST_SCRIPT_RUNS_AS, script))
    return listed


def manifest_commands(manifest: Mapping[str, Any], *, owners: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every command the manifest's nodes run, in manifest order: ``node_id``, ``runs_as`` (``node`` or
    ``judgment``), ``argv`` and ``timeout_seconds`` (None: the console's default).

    Given ``owners`` (each node id to the org node that planned it, as graphs.runs.facts.node_owners maps
    them), validators' test scripts are listed too (``node_commands_planned``). Without, the list holds
    only the commands a project that allows none refuses outright (``commands_disabled``): a test script
    is not refused, it does not run and its node says so."""
    listed = []
    for node in manifest.get("nodes") or []:
        if not isinstance(node, Mapping):
            continue
        if owners is None:
            listed.extend(_command_listed(node, runs_as, argv) for runs_as, argv in node_commands(node))
        else:
            listed.extend(node_commands_planned(node, org_node=owners.get(node.get("node_id"), ""), manifest=manifest))
    return listed


def _command_listed(node: Mapping[str, Any], runs_as: str, argv: list[str]) -> dict[str, Any]:
    spec = {"node": node, "judgment": node.get("judgment")}.get(runs_as) or {}
    return {"node_id": node.get("node_id"), "runs_as": runs_as, "argv": argv,
            "timeout_seconds": spec.get("timeout_seconds")}


def _command_node_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = [
        f"{label}: a command node runs no agent, so it takes no {field}"
        for field in COMMAND_NODE_AGENT_FIELDS
        if field in node
    ]
    errors.extend(command_errors(node["command"], f"{label}: command"))
    errors.extend(timeout_errors(node.get("timeout_seconds"), f"{label}: timeout_seconds"))
    expect_exit = node.get("expect_exit")
    if expect_exit is not None and (isinstance(expect_exit, bool) or not isinstance(expect_exit, int)):
        errors.append(f"{label}: expect_exit must be an integer exit code, not {expect_exit!r}")
    return errors


def _retry_policy_errors(policy: Any, label: str) -> list[str]:
    """A retry policy: ``max_retries`` (0 to the limit), optional ``delays_seconds`` (the wait before
    each retry, the last one repeating) and optional ``kinds`` (which transient errors it retries)."""
    if not isinstance(policy, dict):
        return [f"{label} must be an object with max_retries, and optionally delays_seconds and kinds"]
    fields = ("max_retries", "delays_seconds", "kinds")
    errors = [f"{label}: unknown field {key!r}" for key in policy if key not in fields]
    retries = policy.get("max_retries")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= RETRY_POLICY_MAX_RETRIES:
        errors.append(f"{label}.max_retries must be an integer from 0 to {RETRY_POLICY_MAX_RETRIES}, not {retries!r}")
    delays = policy.get("delays_seconds")
    if delays is not None and not (
        isinstance(delays, list) and delays and len(delays) <= RETRY_POLICY_MAX_RETRIES
        and all(not isinstance(d, bool) and isinstance(d, int | float) and 0 <= d <= RETRY_POLICY_MAX_DELAY_SECONDS
                for d in delays)
    ):
        errors.append(
            f"{label}.delays_seconds must be a list of 1 to {RETRY_POLICY_MAX_RETRIES} numbers of seconds from 0 to "
            f"{RETRY_POLICY_MAX_DELAY_SECONDS}, not {delays!r}"
        )
    kinds = policy.get("kinds")
    if kinds is not None and not (isinstance(kinds, list) and kinds and all(kind in RETRYABLE_KINDS for kind in kinds)):
        errors.append(f"{label}.kinds must be a non-empty list of {choices(RETRYABLE_KINDS)}, not {kinds!r}")
    return errors
