"""The API's shape of what an attempt's agent calls used and cost (``ExecutionOut``'s accounting)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ninja import Field, Schema

from graphs.runs.accounting import known_tokens


class AttemptSpendOut(Schema):
    """What the attempt's agent calls cost (node, judge, planning and repair calls summed)."""

    agent_calls: int
    cost_usd: Decimal | None = Field(..., description="Null when no call reported a cost; a lower bound when "
                                     "calls_without_cost is above 0.")
    input_tokens: int | None = Field(..., description="Null when no call reported usage (unknown, never 0).")
    output_tokens: int | None
    cache_creation_input_tokens: int | None
    cache_read_input_tokens: int | None
    calls_without_usage: int = Field(..., description="Calls that reported no usage: the tokens are a lower bound.")
    calls_without_cost: int = Field(..., description="Calls that reported no cost: the cost is a lower bound.")
    num_turns: int
    tool_calls: int
    duration_api_ms: int
    model: str
    session_id: str

    @staticmethod
    def resolve_input_tokens(obj: Any) -> int | None:
        return known_tokens(obj, "input_tokens")

    @staticmethod
    def resolve_output_tokens(obj: Any) -> int | None:
        return known_tokens(obj, "output_tokens")

    @staticmethod
    def resolve_cache_creation_input_tokens(obj: Any) -> int | None:
        return known_tokens(obj, "cache_creation_input_tokens")

    @staticmethod
    def resolve_cache_read_input_tokens(obj: Any) -> int | None:
        return known_tokens(obj, "cache_read_input_tokens")
