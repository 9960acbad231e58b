#!/usr/bin/env python3
"""A stand-in for the Claude Code CLI, for tests of the claude agent runner.

It accepts only the argv the runner must send:
    fake_claude.py --agent <org_node> -p <prompt> --output-format json --permission-mode auto
        [--allowedTools A,B] [--disallowedTools C,D] [--max-turns N]
and behaves as the JSON fixture named by FAKE_CLAUDE_FIXTURE describes:
    {"stream_lines": [...], "line_delay": 0.05,  # written to stderr one by one, like progress output
     "sleep": 0,                                 # seconds to wait before the final output (a hang)
     "stdout": {...} | "text",                   # an object is printed as one JSON line, text as is
     "stderr": "text", "exit_code": 0,
     "spawn_lingering_child": false}             # leave a child holding stdout open after exiting
When FAKE_CLAUDE_RECORD names a file, it first writes {"argv", "cwd", "pid", "stdin_is_devnull"} there.
"""

import json
import os
import subprocess
import sys
import time

_TAIL = ["--output-format", "json", "--permission-mode", "auto"]


_LIMITS = {"--allowedTools", "--disallowedTools", "--max-turns"}


def _argv_ok(args):
    base, limits = args[:8], args[8:]
    flags = limits[::2]
    return (
        len(base) == 8 and base[0] == "--agent" and base[2] == "-p" and base[4:] == _TAIL
        and len(limits) % 2 == 0 and set(flags) <= _LIMITS and len(set(flags)) == len(flags)
    )


def _stdin_is_devnull():
    stdin, devnull = os.fstat(0), os.stat(os.devnull)
    return (stdin.st_dev, stdin.st_ino) == (devnull.st_dev, devnull.st_ino)


def main():
    args = sys.argv[1:]
    record = os.environ.get("FAKE_CLAUDE_RECORD")
    if record:
        with open(record, "w", encoding="utf-8") as out:
            json.dump(
                {
                    "argv": args,
                    "cwd": os.getcwd(),
                    "pid": os.getpid(),
                    "stdin_is_devnull": _stdin_is_devnull(),
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
    for line in fixture.get("stream_lines", []):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        time.sleep(fixture.get("line_delay", 0.05))
    time.sleep(fixture.get("sleep", 0))
    stdout = fixture.get("stdout", "")
    sys.stdout.write(json.dumps(stdout) + "\n" if isinstance(stdout, dict) else stdout)
    sys.stderr.write(fixture.get("stderr", ""))
    return fixture.get("exit_code", 0)


if __name__ == "__main__":
    sys.exit(main())
