"""A deterministic built-in agent, so the console runs end to end with no model and no key.

It plans from the catalogs, writes clearly labelled placeholder content, and judges so that every
``loop_back`` node fails its first attempt and passes afterwards: a demo run shows one loop-back per
stage and then succeeds. Its answers depend only on the call (org node, purpose, node, attempt, the
existing node ids and whether the project runs commands), never on the clock or randomness, and on
the prompt text only so far as a follow-up run asking it to fix a forge's failing check (its heading,
graphs.domain.check_prompts) has it revise its output, so the fix is a change the pull request receives.

In a project that runs commands the validator also plans a command node that runs its test script
with ``python3``, so that script is saved in the working folder too (as ``<node_id>.py``): the one file
this agent writes. The script is a real check: it runs the unit tests under ``tests/`` in the working
folder (the demo project holds its CSV export's tests there) and names each one, or says that nothing
was tested; the final verdict then says it rests on that command.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphs.agents.base import TOKEN_FIELDS, AgentCall, AgentCancelled, AgentError, AgentResult
from graphs.agents.offline_plans import LABEL, gap_text, plan_text
from graphs.domain.catalogs import (
    artifact_entry,
)
from graphs.domain.check_prompts import CHECK_FAILED_HEADING

# The node_ids whose scripts it saves: names of a file in the working folder, never a path out of it.
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class OfflineRunner:
    name = "offline"

    def __init__(self, *, line_delay: float = 0.01, call_seconds: float = 0.0) -> None:
        # The pause between emitted lines only makes live logs look live; tests set it to 0. A call
        # lasts at least ``call_seconds``, its lines spread over it, so a demo can be watched at work.
        self.line_delay = line_delay
        self.call_seconds = call_seconds

    def run(self, call: AgentCall) -> AgentResult:
        if call.purpose == "plan" and call.planning_mode == "gap_driven":
            text = gap_text(call.existing_node_ids)
        elif call.purpose == "plan":
            text = plan_text(call.org_node, call.existing_node_ids, commands_allowed=call.commands_allowed)
        elif call.purpose == "judge":
            text = _judge_text(call.node or {}, call.attempt)
        else:
            text = _node_text(call.node or {}, call.attempt, fixing=CHECK_FAILED_HEADING in (call.prompt or ""))
        self._emit(text, call)
        if call.purpose == "node" and call.commands_allowed and _saves_its_script(call.node or {}):
            _file_write(call.cwd / f"{call.node['node_id']}.py", text)
        # No model, no tokens, nothing to pay: known zeros, not unknowns.
        return AgentResult(text=text, raw={"agent": self.name, "purpose": call.purpose},
                           usage=dict.fromkeys(TOKEN_FIELDS, 0), cost_usd=0.0)

    def _emit(self, text: str, call: AgentCall) -> None:
        deadline = time.monotonic() + call.timeout
        lines = text.splitlines()
        pause = max(self.line_delay, self.call_seconds / max(len(lines), 1))
        for line in lines:
            if call.cancelled():
                raise AgentCancelled()
            if time.monotonic() > deadline:
                raise AgentError(
                    f"the offline agent did not finish within {call.timeout:g} s", kind="timeout"
                )
            call.emit(line)
            if pause:
                time.sleep(pause)


# --- planning -------------------------------------------------------------------------------------


def _saves_its_script(node: Mapping[str, Any]) -> bool:
    """A generic test_script node, as the validator plans one, whose node_id is a plain file name: its
    script is also saved as a file."""
    node_id = node.get("node_id")
    return (node.get("node_type") == "test_script" and "task_prompt" in node and isinstance(node_id, str)
            and _FILE_NAME.fullmatch(node_id) is not None)


def _file_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole: a command reading the file never sees half of it."""
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as error:
        # A full disk passes (space comes back): the call is worth making again, as after an outage.
        full = error.errno in (errno.ENOSPC, errno.EDQUOT)
        raise AgentError(f"the offline agent could not save {path.name} in {path.parent}: {error}",
                         kind="unavailable" if full else "not_found") from None


def _node_text(node: Mapping[str, Any], attempt: int, *, fixing: bool = False) -> str:
    node_id = str(node.get("node_id", "node"))
    kind = node.get("node_type") or node.get("artifact_type")
    revision = f" (attempt {attempt}, revised after review)" if attempt > 1 else ""
    if fixing:
        # A follow-up run fixing a forge's failing check: its output, and so the file it saves, is revised.
        revision = " (revised to fix a check that failed on the pull request)"
    if kind == "test_script":
        return _test_script(node_id, revision)
    if kind == "final_verdict" and (checks := [dep for dep in node.get("depends_on", []) if "run_test_script" in dep]):
        return (
            "VERDICT: pass\n"
            f"{LABEL} verdict for node `{node_id}`{revision}. No language model judged the work: this pass rests "
            f"on {', '.join(f'`{dep}`' for dep in checks)}, which ran the test script and succeeded (had it "
            "failed, the run would have looped back before reaching this node). That node's output lists "
            "every test that ran.\n"
        )
    if kind == "final_verdict":
        return (
            "VERDICT: pass\n"
            f"{LABEL} placeholder verdict for node `{node_id}`{revision}. No language model was consulted, "
            "so nothing was actually checked; the verdict is pass so the demo run can finish.\n"
        )
    if kind == "review_verdict":
        # A review a verdict gate reads (an imported DAG spec's, see graphs.planning.dag_spec_plan): the gate passes.
        return (
            "VERDICT: pass\n"
            f"{LABEL} placeholder review for node `{node_id}`{revision}. No language model was consulted, "
            "so nothing was actually reviewed; the verdict is pass so the run can go on past its gate.\n"
        )
    entry = artifact_entry(str(node.get("artifact_type", "")))
    label = entry["title"] if entry else (kind or "output")
    return (
        f"{LABEL} placeholder {label} for node `{node_id}`{revision}\n\n"
        "No language model was consulted: this text stands in for the real output so the work graph can "
        "run end to end.\n"
        "To have real agents write it, choose one (claude, codex or openai) as the Agent runner on the "
        "project's Settings page, or make it every project's default with WORKGRAPH_AGENT.\n"
    )


def _test_script(node_id: str, revision: str) -> str:
    """A script that runs the unit tests under ``tests/`` in the working folder and names each one; with
    none there it tests nothing, and says so."""
    return (
        f"# {LABEL} test script{revision}: it runs the unit tests under tests/ in the working folder.\n"
        "import sys\n"
        "import unittest\n"
        "from pathlib import Path\n\n"
        "# A check leaves the working folder as it found it: no __pycache__ folders.\n"
        "sys.dont_write_bytecode = True\n"
        f"NODE_ID = {node_id!r}\n\n\n"
        "def main() -> int:\n"
        '    found = Path("tests").is_dir()\n'
        '    suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".") if found else None\n'
        "    if suite is None or suite.countTestCases() == 0:\n"
        f'        print("{LABEL} placeholder check for node " + NODE_ID + ": nothing was tested "\n'
        '              "(the working folder has no unit tests under tests/)")\n'
        "        return 0\n"
        f'    print("{LABEL} check for node " + NODE_ID + ": running the unit tests under tests/")\n'
        "    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)\n"
        '    print(f"tested: {result.testsRun} unit tests under tests/, {len(result.failures)} failed, "\n'
        '          f"{len(result.errors)} in error")\n'
        "    return 0 if result.wasSuccessful() else 1\n\n\n"
        'if __name__ == "__main__":\n'
        "    sys.exit(main())\n"
    )


def _judge_text(node: Mapping[str, Any], attempt: int) -> str:
    action = (node.get("on_fail") or {}).get("action")
    if action == "loop_back" and attempt == 1:
        node_id = node.get("node_id", "node")
        issue = (
            f"{LABEL} demo review of `{node_id}`: the output does not trace each acceptance criterion back "
            "to a requirement in its inputs; rework the upstream input so that it does."
        )
        return json.dumps({"ok": False, "issues": [issue]})
    return json.dumps({"ok": True, "issues": []})
