"""The task page's delivery of each run: ``{{ delivery_offers|offer_of:run.pk }}`` in ``console/_run_tree.html``."""

from __future__ import annotations

from typing import Any

from django import template

from graphs.delivery.reads import DeliveryOffer

register = template.Library()


@register.filter
def offer_of(offers: dict[Any, DeliveryOffer] | None, run_id: Any) -> DeliveryOffer | None:
    """The delivery offer of the run ``run_id`` among ``offers``; None on a page that has none."""
    return (offers or {}).get(run_id)
