"""The header of a node page's trace: what the attempt's agent calls used and cost, and the command that
reopens their session.

The trace itself (tool calls nested under their subagent, results, retries) is built in the browser by
``static/js/trace.js``, from the lines the page starts with and then from each live line, so one rule
builds it whichever way a line came. The header is read here from the attempt row, which holds the
totals once the attempt has finished; while it runs, the script sums the ``agent_result`` lines
instead. Both render the numbers alike (``tests/fixtures/trace/headers.json`` holds both to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from graphs.domain.money_words import usd_text
from graphs.models import WorkNodeExecution
from graphs.runs.accounting import TOKEN_FIELDS, tokens_known

_TOKEN_LABELS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_creation_input_tokens": "cache write",
    "cache_read_input_tokens": "cache read",
}


@dataclass(frozen=True)
class TraceHeader:
    """An attempt's totals, in the words the trace header shows them."""

    model: str
    num_turns: int
    # None: no call reported usage (unknown, never 0).
    usage: dict[str, int] | None
    cost_usd: Decimal | float | None
    session_id: str

    @property
    def turns(self) -> str:
        return _grouped(self.num_turns)

    @property
    def tokens(self) -> str:
        """The four token counts summed: ``27,831``; ``—`` when no call reported usage."""
        if self.usage is None:
            return "—"
        return _grouped(sum(self.usage.get(name, 0) for name in TOKEN_FIELDS))

    @property
    def tokens_detail(self) -> str:
        """The sum's parts: ``12 input · 1,874 output · 5,812 cache write · 20,133 cache read``."""
        if self.usage is None:
            return ""
        return " · ".join(f"{_grouped(self.usage.get(name, 0))} {_TOKEN_LABELS[name]}" for name in TOKEN_FIELDS)

    @property
    def cost(self) -> str:
        return usd_text(self.cost_usd)

    @property
    def resume_command(self) -> str:
        """``claude --resume <session>``, or "" when no call named a session (only Claude's do)."""
        return f"claude --resume {self.session_id}" if self.session_id else ""


def attempt_trace_header(*, execution: WorkNodeExecution) -> TraceHeader | None:
    """The attempt's totals from its row once it has finished; None while it runs, or when it made no
    agent call.

    While it runs, its row holds none of its calls (they are written with its result) or, in a run with
    a budget, the calls that have ended so far: its lines say more, and sooner.
    """
    if not execution.is_finished() or not execution.agent_calls:
        return None
    return TraceHeader(
        model=execution.model,
        num_turns=execution.num_turns,
        usage={name: getattr(execution, name) for name in TOKEN_FIELDS} if tokens_known(execution) else None,
        cost_usd=execution.cost_usd,
        session_id=execution.session_id,
    )


def _grouped(number: int) -> str:
    return f"{number:,}"
