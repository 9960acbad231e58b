"""Personal API tokens: created and revoked by their owner, stored hashed, shown once.

A token expires (after ``DEFAULT_LIFETIME_DAYS`` unless its creator chose fewer), may be limited to
reading, and is revoked with every other token of its user when the user's password changes or the
user is deactivated.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from graphs.audit import audit_record
from graphs.errors import WorkGraphError
from graphs.models import ApiToken, AuditEntry

TOKEN_PREFIX = "wgc_"  # noqa: S105  (a public marker that lets scanners recognise leaked tokens)
# Recording every use would write on every API request; a minute's precision is enough to audit.
LAST_USED_PRECISION = timedelta(minutes=1)
DEFAULT_LIFETIME_DAYS = 90
MAX_LIFETIME_DAYS = 365
# Scripts that mint a token per run without revoking them would otherwise pile up live credentials.
MAX_ACTIVE_TOKENS = 20


class TokenLimitReached(WorkGraphError):
    """The user already holds MAX_ACTIVE_TOKENS active tokens."""


def token_create(
    *, user: AbstractBaseUser, name: str, lifetime_days: int = DEFAULT_LIFETIME_DAYS, read_only: bool = False
) -> tuple[ApiToken, str]:
    """Create a token for ``user``; return the row and the token text, which is never stored.

    Raises TokenLimitReached when the user already holds MAX_ACTIVE_TOKENS active tokens.
    """
    if not 1 <= lifetime_days <= MAX_LIFETIME_DAYS:
        raise ValueError(f"a token lives between 1 and {MAX_LIFETIME_DAYS} days")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        # Locks the user's row, so two concurrent creations cannot both pass the limit.
        get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()
        if _active(ApiToken.objects.filter(user=user), now=now).count() >= MAX_ACTIVE_TOKENS:
            raise TokenLimitReached(f"you already hold {MAX_ACTIVE_TOKENS} active tokens; revoke one first")
        token = ApiToken.objects.create(
            user=user, name=name, prefix=raw[: len(TOKEN_PREFIX) + 6], key_hash=_hash(raw),
            expires_at=now + timedelta(days=lifetime_days), read_only=read_only,
        )
        audit_record(actor=user, action=AuditEntry.Action.TOKEN_CREATED, object_type="token", object_id=token.pk,
                     summary=f"Created the API token \u201c{name}\u201d ({token.prefix}…)"
                             f"{', read-only' if read_only else ''}, expiring {token.expires_at:%Y-%m-%d}")
    return token, raw


def token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke one of the user's own tokens; return False when there is no such active token."""
    with transaction.atomic():
        token = ApiToken.objects.select_for_update(no_key=True).filter(
            pk=token_id, user=user, revoked_at__isnull=True).first()
        if token is None:
            return False
        ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
        audit_record(actor=user, action=AuditEntry.Action.TOKEN_REVOKED, object_type="token", object_id=token.pk,
                     summary=f"Revoked the API token \u201c{token.name}\u201d ({token.prefix}…)")
    return True


def token_revoke_all(*, user: AbstractBaseUser) -> int:
    """Revoke every token of ``user`` not revoked yet; return how many."""
    with transaction.atomic():
        revoked = ApiToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
        if revoked:
            # No one chose these: the user's credentials changed, and the tokens went with the old ones.
            audit_record(actor=None, action=AuditEntry.Action.TOKEN_REVOKED, object_type="user", object_id=user.pk,
                         summary=f"Revoked {user.get_username()}'s {revoked} API token{'s' if revoked != 1 else ''}:"
                                 " their password changed or they were deactivated")
    return revoked


def token_authenticate(raw: str) -> ApiToken | None:
    """Return the active token (its user loaded) when ``raw`` is one and its user is active, else None."""
    if not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    now = timezone.now()
    token = _active(ApiToken.objects.select_related("user").filter(key_hash=_hash(raw)), now=now).first()
    if token is None or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def user_tokens_revoke_on_credentials_change(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any):
    """``pre_save`` receiver for the user model: a changed password or a deactivation revokes the tokens.

    Whoever learned the old password may have minted tokens with it; they must not outlive it.
    """
    if instance.pk is None or (update_fields is not None and not {"password", "is_active"} & set(update_fields)):
        return
    before = sender.objects.filter(pk=instance.pk).values("password", "is_active").first()
    if before is None:
        return
    if before["password"] != instance.password or (before["is_active"] and not instance.is_active):
        token_revoke_all(user=instance)


def _active(tokens, *, now):
    return tokens.filter(revoked_at__isnull=True, expires_at__gt=now)


def _hash(raw: str) -> str:
    # Tokens carry 256 bits of randomness, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(raw.encode()).hexdigest()
