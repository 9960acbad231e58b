#!/usr/bin/env python3
"""A stand-in for the Claude Code CLI, for tests of the claude agent runner.

It accepts only the argv the runner must send:
    fake_claude.py --agent <org_node> [--agents '{"<org_node>": {...}}'] -p --output-format stream-json --verbose
        [--model M] --permission-mode <mode> [--allowedTools A,B] [--disallowedTools C,D] [--max-turns N]
        [--max-budget-usd USD]
(the options after --verbose in any order, each at most once; --agents a JSON object defining <org_node>)
reads the prompt from stdin to its end, then plays the scenario of the JSON fixture named by
FAKE_CLAUDE_FIXTURE:
    {"stdout": [...],          # each item one stdout line: an object is printed as one line of JSON
                               # (an event of the documented stream-json format), a string as it is
     "line_delay": 0,          # seconds between two stdout lines
     "line_rate": 200,         # optional: stdout lines a second, on a fixed schedule from the first
     "stamp": "@T@",           # optional: in each stdout line, this text becomes the wall-clock time
                               # (time.time()) at which the line is printed
     "stderr": "text", "exit_code": 0,
     "spawn_lingering_child": false}   # leave a child holding stdout open after exiting
An object of ``stdout`` with a "fake" key is a direction to this script, never printed:
    {"fake": "sleep", "seconds": 30}    pause (a hang);
    {"fake": "wait_for_gate"}           wait until the file named by FAKE_CLAUDE_GATE exists (at most 30 s);
    {"fake": "wait_for_gate", "name": "n"}   the same for the file FAKE_CLAUDE_GATE + ".n": a second gate.
When FAKE_CLAUDE_RECORD names a file, it writes {"argv", "cwd", "pid", "stdin_bytes", "stdin_sha256"}
there once it has read stdin.
"""

import hashlib
import json
import os
import subprocess
import sys
import time

_OUTPUT = ["-p", "--output-format", "stream-json", "--verbose"]
_OPTIONS = {"--model", "--permission-mode", "--allowedTools", "--disallowedTools", "--max-turns", "--max-budget-usd"}
_PERMISSION_MODES = {"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}
_GATE_WAIT_SECONDS = 30


def _argv_ok(args):
    if len(args) < 2 or args[0] != "--agent":
        return False
    rest = args[2:]
    if rest[:1] == ["--agents"]:
        try:
            agents = json.loads(rest[1])
        except (IndexError, json.JSONDecodeError):
            return False
        if not isinstance(agents, dict) or args[1] not in agents:
            return False
        rest = rest[2:]
    options = rest[len(_OUTPUT):]
    names = options[::2]
    chosen = dict(zip(names, options[1::2], strict=False))
    return (
        rest[:len(_OUTPUT)] == _OUTPUT and len(options) % 2 == 0 and set(names) <= _OPTIONS
        and len(set(names)) == len(names) and chosen.get("--permission-mode") in _PERMISSION_MODES
    )


def _wait_for_gate(name):
    gate = os.environ["FAKE_CLAUDE_GATE"] + (f".{name}" if name else "")
    deadline = time.monotonic() + _GATE_WAIT_SECONDS
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            sys.stderr.write("fake claude: the gate never opened\n")
            sys.exit(2)
        time.sleep(0.01)


def _play(item, delay, stamp):
    if isinstance(item, dict) and "fake" in item:
        if item["fake"] == "sleep":
            time.sleep(item["seconds"])
        elif item["fake"] == "wait_for_gate":
            _wait_for_gate(item.get("name"))
        return
    line = json.dumps(item) if isinstance(item, dict) else item
    if stamp:
        line = line.replace(stamp, f"{time.time():.6f}")
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    time.sleep(delay)


def main():
    args = sys.argv[1:]
    prompt = sys.stdin.buffer.read()
    record = os.environ.get("FAKE_CLAUDE_RECORD")
    if record:
        with open(record, "w", encoding="utf-8") as out:
            json.dump(
                {
                    "argv": args,
                    "cwd": os.getcwd(),
                    "pid": os.getpid(),
                    "stdin_bytes": len(prompt),
                    "stdin_sha256": hashlib.sha256(prompt).hexdigest(),
                },
                out,
            )
    if not _argv_ok(args):
        sys.stderr.write(f"fake claude: unexpected argv {args!r}\n")
        return 64
    with open(os.environ["FAKE_CLAUDE_FIXTURE"], encoding="utf-8") as fixture_file:
        fixture = json.load(fixture_file)
    if fixture.get("spawn_lingering_child"):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    rate = fixture.get("line_rate")
    start, printed = None, 0
    for item in fixture.get("stdout", []):
        if rate and not (isinstance(item, dict) and "fake" in item):
            start = time.monotonic() if start is None else start
            time.sleep(max(0.0, start + printed / rate - time.monotonic()))
            printed += 1
        _play(item, fixture.get("line_delay", 0), fixture.get("stamp"))
    sys.stderr.write(fixture.get("stderr", ""))
    return fixture.get("exit_code", 0)


if __name__ == "__main__":
    sys.exit(main())
