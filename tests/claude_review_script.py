"""What the Messages API stand-in answers the real Claude Code CLI in the tests of a change review it amends:
node ``impl`` writes feature.txt (``FIRST``); on the attempt a review asked for (its prompt holds ``ASKED``)
it shouts line 2 (``AMENDED``), reading the file first when ``read_first``."""

from __future__ import annotations

from collections.abc import Callable

from tests.standins.anthropic_api import Reply, Request, text, tool

FIRST = "one\ntwo\nthree\n"
AMENDED = "one\nTWO\nthree\n"
COMMENT = "Shout this line: the spec says TWO."
ASKED = "## Changes requested in review"

_WRITE = (tool("Bash", {"command": "printf 'one\\ntwo\\nthree\\n' > feature.txt", "description": "Write it"}),
          text("feature.txt written"))
_READ = (tool("Bash", {"command": "cat feature.txt", "description": "Read what I wrote"}),)
_AMEND = (tool("Bash", {"command": "printf 'one\\nTWO\\nthree\\n' > feature.txt", "description": "Amend it"}),
          text("line 2 amended as the review asked"))


def amending_script(*, read_first: bool = False) -> Callable[[Request], Reply | None]:
    """The stand-in's script: each turn of ``impl``'s attempts answered in order, nothing else answered."""
    amend = (*_READ, *_AMEND) if read_first else _AMEND

    def script(request: Request) -> Reply | None:
        asked = request.first_user_text
        if "Do impl." not in asked:
            return None
        turns = amend if ASKED in asked else _WRITE
        return turns[min(request.turn, len(turns) - 1)]

    return script
