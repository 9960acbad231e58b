"""How long something took, or has waited, in the one set of words every page uses: ``0.4 s``, ``42 s``,
``3 min 05 s``, ``2 h 07 min``, ``3 d 04 h``.

Under a minute reads in seconds — never "0 minutes" — with a tenth of a second below ten; past that, the
two largest units, the smaller padded so a column of them lines up.
"""

from __future__ import annotations

from datetime import timedelta

_MINUTE = 60
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR


def duration_text(value: timedelta) -> str:
    """``value`` in words; a negative duration (clocks that disagree) reads as none."""
    seconds = max(value.total_seconds(), 0.0)
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < _MINUTE:
        return f"{whole} s"
    if whole < _HOUR:
        return f"{whole // _MINUTE} min {whole % _MINUTE:02d} s"
    if whole < _DAY:
        return f"{whole // _HOUR} h {whole % _HOUR // _MINUTE:02d} min"
    return f"{whole // _DAY} d {whole % _DAY // _HOUR:02d} h"
