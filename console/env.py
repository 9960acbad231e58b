"""Typed readers for environment variables.

Each helper raises ``ImproperlyConfigured`` naming the variable and the bad value, so a typo in a
deployment fails at start-up with a readable message instead of somewhere deep in a request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "", *, environ: Mapping[str, str] | None = None) -> str:
    return (environ if environ is not None else os.environ).get(name, default)


def env_bool(name: str, default: bool = False, *, environ: Mapping[str, str] | None = None) -> bool:
    raw = (environ if environ is not None else os.environ).get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}")


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    raw = (environ if environ is not None else os.environ).get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_float(
    name: str, default: float, *, minimum: float = 0.0, environ: Mapping[str, str] | None = None
) -> float:
    raw = (environ if environ is not None else os.environ).get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_choice(
    name: str, default: str, choices: Sequence[str], *, environ: Mapping[str, str] | None = None
) -> str:
    value = (environ if environ is not None else os.environ).get(name, default).strip() or default
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def env_pairs(name: str, *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Comma-separated ``key=value`` pairs, as a dict; a pair without ``=`` or with an empty side is an error."""
    pairs: dict[str, str] = {}
    for item in env_list(name, environ=environ):
        key, separator, value = item.partition("=")
        if not separator or not key.strip() or not value.strip():
            raise ImproperlyConfigured(f"{name} must hold name=value pairs separated by commas; got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def env_prices(name: str, *, environ: Mapping[str, str] | None = None) -> dict[str, tuple[float, float]]:
    """``model=input/output`` pairs, dollars per million tokens, as {model: (input, output)}."""
    prices: dict[str, tuple[float, float]] = {}
    for model, price in env_pairs(name, environ=environ).items():
        parts = price.split("/")
        try:
            input_price, output_price = (float(part) for part in parts)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must hold model=input/output prices in dollars per million tokens; got {model}={price!r}"
            ) from None
        if input_price < 0 or output_price < 0:
            raise ImproperlyConfigured(f"{name}: a price cannot be negative; got {model}={price!r}")
        prices[model] = (input_price, output_price)
    return prices


def env_list(name: str, default: Sequence[str] = (), *, environ: Mapping[str, str] | None = None) -> list[str]:
    raw = (environ if environ is not None else os.environ).get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(
    name: str, *, schemes: Sequence[str], environ: Mapping[str, str] | None = None
) -> str | None:
    """Return the URL in ``name``, or None when unset or empty.

    Only the scheme and the presence of a host are checked here; connecting is the client's job.
    """
    raw = (environ if environ is not None else os.environ).get(name, "").strip()
    if not raw:
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in schemes:
        raise ImproperlyConfigured(f"{name} must start with one of {', '.join(s + '://' for s in schemes)}")
    if not parsed.hostname and not parsed.path.strip("/"):
        raise ImproperlyConfigured(f"{name} has no host: {raw!r}")
    return raw
