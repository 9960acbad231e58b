"""Pages of a long list whose count is bounded: counted only so far past the page asked for."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from django.core.paginator import Page, Paginator
from django.db import connection
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
    Pages are asked for with ``get_page``, which sets where the count starts.

    A list whose filter costs much to evaluate (a search) reads it once, on PostgreSQL: given
    ``by_key`` (the objects of some keys, in any order), the count also sorts the rows it counted,
    by the list's ordering, and keeps the keys of the page asked for; when it reached the end of the
    list, those are the page's, and the page is read by them. When it stopped short, the page is
    sliced from ``capped_list`` if given (the same objects, found in a way that costs less when they
    are many), else from the list."""

    def __init__(self, object_list: QuerySet, per_page: int, *, ahead: int,
                 by_key: Callable[[list[Any]], Sequence[Any]] | None = None,
                 capped_list: QuerySet | None = None) -> None:
        super().__init__(object_list, per_page)
        self.ahead = ahead
        self.by_key = by_key
        self.capped_list = capped_list
        self._start = 0
        self._keys: list[Any] | None = None

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
        if self.by_key is None or connection.vendor != "postgresql":
            return self.object_list.order_by().values("pk")[: self._start + self.ahead + 1].count()
        return self._count_keeping_keys()

    def _count_keeping_keys(self) -> int:
        order = self.object_list.query.order_by
        key = self.object_list.model._meta.pk.attname
        names = [name.lstrip("-") for name in order]
        hits = self.object_list.order_by().values(*dict.fromkeys([key, *names]))[: self._start + self.ahead + 1]
        sql, params = hits.query.sql_with_params()
        quote = connection.ops.quote_name
        ordering = ", ".join(f"hits.{quote(name.lstrip('-'))}{' DESC' if name.startswith('-') else ''}"
                             for name in order)
        # Only the model's quoted column names and the page's bounds, two ints, are formatted in.
        first, last = int(self._start) + 1, int(self._start) + self.per_page
        counted_sql = f"SELECT COUNT(*), (ARRAY_AGG(hits.{quote(key)} ORDER BY {ordering}))[{first}:{last}] FROM ({sql}) hits"  # noqa: S608, E501
        with connection.cursor() as cursor:
            cursor.execute(counted_sql, params)
            [(counted, keys)] = cursor.fetchall()
        self._keys = keys or []
        return counted

    def page(self, number: Any) -> Page:
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        if self._keys is not None and not self.capped and bottom == self._start:
            found = {row.pk: row for row in self.by_key(self._keys)}
            return self._get_page([found[key] for key in self._keys if key in found], number, self)
        if self.capped and self.capped_list is not None:
            return self._get_page(self.capped_list[bottom:bottom + self.per_page], number, self)
        return super().page(number)

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
