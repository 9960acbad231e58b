"""Where a webhook may send: never, unless the deployment allows it, to loopback, link-local, private or
otherwise non-public addresses — the console must not become a way into the network it runs in.

A URL is checked when it is registered and again at every delivery, after its name is resolved: the
delivery connects to the very address that was checked (``WebhookTarget.address``), so a name that
resolves elsewhere the second time (DNS rebinding) cannot slip past the check.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

SCHEMES = {"http": 80, "https": 443}
# A DNS name: dot-separated labels of letters, digits and hyphens (checked before any lookup is made).
_HOST_NAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?")


class WebhookAddressRefused(Exception):
    """The URL is malformed, does not resolve, or names an address this deployment does not send to."""


@dataclass(frozen=True)
class WebhookTarget:
    """A checked URL: its parts, and the one resolved address a delivery connects to."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def webhook_url_parse(url: str) -> tuple[str, str, int, str]:
    """The scheme, host, port and path (with its query) of ``url``; WebhookAddressRefused when it is not an
    http(s) URL with a host and no credentials."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise WebhookAddressRefused(f"not a URL: {error}") from None
    if parts.scheme not in SCHEMES:
        raise WebhookAddressRefused("the URL must start with http:// or https://")
    if not parts.hostname:
        raise WebhookAddressRefused("the URL names no host")
    if parts.username or parts.password:
        raise WebhookAddressRefused("the URL must not carry a user or password")
    if not (_HOST_NAME.fullmatch(parts.hostname) or _is_ip(parts.hostname)):
        raise WebhookAddressRefused(f"{parts.hostname!r} is not a host name")
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    return parts.scheme, parts.hostname, port or SCHEMES[parts.scheme], path


def webhook_target(url: str) -> WebhookTarget:
    """Resolve ``url`` and check every address its host has; the target connects to the first of them.
    Raise WebhookAddressRefused with the reason when any is refused or none resolves."""
    scheme, host, port, path = webhook_url_parse(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise WebhookAddressRefused(f"{host} does not resolve: {error}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise WebhookAddressRefused(f"{host} does not resolve")
    for address in addresses:
        reason = address_refusal(address)
        if reason is not None:
            raise WebhookAddressRefused(f"{host} resolves to {address}, {reason}")
    return WebhookTarget(scheme=scheme, host=host, port=port, path=path, address=addresses[0])


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def address_refusal(address: str) -> str | None:
    """Why a webhook may not be sent to ``address`` (an IP), or None when it may."""
    if settings.WORKGRAPH_WEBHOOK_ALLOW_PRIVATE:
        return None
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
        return "not a public address"
    return None
