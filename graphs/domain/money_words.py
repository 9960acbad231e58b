"""What an amount of dollars reads as, on every page: ``static/js/money.js`` is the same rule for the
figures that change live, and ``tests/fixtures/money/amounts.json`` holds both to the same cases.

Four decimals (agent calls cost fractions of a cent); a positive amount too small to show in four reads
``< $0.0001``, never ``$0.0000``, which is kept for an exact zero; an unknown amount reads ``—``. A lower
bound (a total over calls some of which reported no cost) reads ``at least $0.0520``, or ``more than $0``
when what was reported is too small to show.
"""

from __future__ import annotations

from decimal import Decimal

SMALLEST = Decimal("0.0001")
UNKNOWN = "—"


def usd_text(usd: Decimal | float | None, *, lower_bound: bool = False) -> str:
    """``$0.0520``, ``< $0.0001``, ``$0.0000`` or ``—`` (None); ``at least …`` when ``lower_bound``."""
    if usd is None:
        return UNKNOWN
    tiny = 0 < usd < SMALLEST
    if lower_bound:
        return "more than $0" if tiny else f"at least ${usd:.4f}"
    return f"< ${SMALLEST}" if tiny else f"${usd:.4f}"
