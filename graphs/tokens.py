"""Personal API tokens: created and revoked by their owner, stored hashed, shown once."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.models import ApiToken

TOKEN_PREFIX = "wgc_"  # noqa: S105  (a public marker that lets scanners recognise leaked tokens)
# Recording every use would write on every API request; a minute's precision is enough to audit.
LAST_USED_PRECISION = timedelta(minutes=1)


def token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Create a token for ``user``; return the row and the token text, which is never stored."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=raw[: len(TOKEN_PREFIX) + 6], key_hash=_hash(raw))
    return token, raw


def token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke one of the user's own tokens; return False when there is no such active token."""
    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
    )


def token_authenticate(raw: str) -> AbstractBaseUser | None:
    """Return the active user owning the token, or None."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user").filter(key_hash=_hash(raw), revoked_at__isnull=True).first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def _hash(raw: str) -> str:
    # Tokens carry 256 bits of randomness, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(raw.encode()).hexdigest()
