"""Faults the tests inject into the product's own functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class FailingFirst:
    """``real``, raising each of ``failures`` in turn on the calls before it answers."""

    def __init__(self, real: Callable[..., Any], *failures: BaseException) -> None:
        self._real = real
        self._pending = list(failures)

    @property
    def all_raised(self) -> bool:
        return not self._pending

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._pending:
            raise self._pending.pop(0)
        return self._real(*args, **kwargs)
