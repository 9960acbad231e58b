"""Pages of a long list whose count is bounded: counted only so far past the page asked for."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

# A page asked for past any list there could be (a hand-edited link) starts here: the count's LIMIT is
# PostgreSQL's bigint, which a larger number would overflow.
FARTHEST_START = 2**62


class BoundedPaginator(Paginator):
    """Django's Paginator, counting at most ``ahead`` objects past the start of the page asked for.

    An exact count of a filter that matches tens of thousands of rows reads every one of them, costing
    many times the page it is for. This one counts ``SELECT COUNT(*) FROM (... LIMIT n)``, the rows in
    no order and by their key alone, so it stops after ``ahead`` + 1, whatever the number matched.
    When it stops there, ``capped`` is true and ``count`` and ``num_pages`` are lower bounds: there
    are more than ``count_floor`` objects and ``pages_floor`` pages. The page after is counted as far
    past its own start, so the next page is always there to go to while more objects are.
    Pages are asked for with ``get_page``, which sets where the count starts."""

    def __init__(self, object_list: QuerySet, per_page: int, *, ahead: int) -> None:
        super().__init__(object_list, per_page)
        self.ahead = ahead
        self._start = 0

    def get_page(self, number: Any) -> Page:
        try:
            wanted = max(int(number), 1)
        except (TypeError, ValueError):
            wanted = 1  # as Django's own: a page that is no number is the first
        self._start = min((wanted - 1) * self.per_page, FARTHEST_START)
        return super().get_page(number)

    @cached_property
    def count(self) -> int:
        """The objects counted: all of them, or ``count_floor`` + 1 when there are more (``capped``)."""
        return self.object_list.order_by().values("pk")[: self._start + self.ahead + 1].count()

    @property
    def capped(self) -> bool:
        """True when the count stopped short of the end of the list."""
        return self.count > self.count_floor

    @property
    def count_floor(self) -> int:
        """The most objects this paginator counts up to: past it, ``capped``."""
        return self._start + self.ahead

    @property
    def pages_floor(self) -> int:
        """When ``capped``, the whole pages ``count_floor`` objects fill: there are more pages than this."""
        return self.count_floor // self.per_page
