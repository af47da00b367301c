"""What incoming webhooks remember, as claims in the uniques table: deliveries handled (by the provider's delivery
id, and signed ones by a digest of their signature and body too), pull requests open.

All expire (the table's TTL attribute): a delivery only needs to outlive its provider's redeliveries, and a pull
request whose closing was never heard of stops counting after a while.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chalicelib.store.models import UniqueModel
from chalicelib.store.transactions import condition_held

DELIVERY_DAYS = 30  # GitHub redelivers by hand up to 30 days on
OPEN_PULL_REQUEST_DAYS = 90


def _expires(days: int) -> datetime:
    return datetime.now(UTC) + timedelta(days=days)


def _delivery_key(project_id: int, delivery_id: str) -> str:
    return f"webhook-delivery#{project_id}#{delivery_id}"


def _pull_request_key(project_id: int, branch: str) -> str:
    return f"open-pull-request#{project_id}#{branch}"


def claim_delivery(project_id: int, delivery_id: str) -> bool:
    """Note a delivery as handled; False (nothing written) when it was handled before."""
    return _claim(_delivery_key(project_id, delivery_id))


def _claim(key: str) -> bool:
    claim = UniqueModel(key, expires=_expires(DELIVERY_DAYS))
    return condition_held(lambda: claim.save(condition=UniqueModel.key.does_not_exist()))


def release_delivery(project_id: int, delivery_id: str) -> None:
    """Forget a delivery whose handling failed, so a redelivery is handled."""
    UniqueModel(_delivery_key(project_id, delivery_id)).delete()


def _signed_key(project_id: int, digest: str) -> str:
    return f"webhook-signed#{project_id}#{digest}"


def claim_signed_delivery(project_id: int, digest: str) -> bool:
    """Note a signed body as handled; False (nothing written) when the same signed body was handled before."""
    return _claim(_signed_key(project_id, digest))


def release_signed_delivery(project_id: int, digest: str) -> None:
    """Forget a signed body whose handling failed, so a redelivery is handled."""
    UniqueModel(_signed_key(project_id, digest)).delete()


def note_open_pull_request(project_id: int, branch: str) -> None:
    """A pull request from ``branch`` of the project's repository is open."""
    UniqueModel(_pull_request_key(project_id, branch), expires=_expires(OPEN_PULL_REQUEST_DAYS)).save()


def note_closed_pull_request(project_id: int, branch: str) -> None:
    UniqueModel(_pull_request_key(project_id, branch)).delete()


def branch_has_open_pull_request(project_id: int, branch: str) -> bool:
    """Whether a webhook said a pull request from ``branch`` opened, and none since said it closed."""
    try:
        claim = UniqueModel.get(_pull_request_key(project_id, branch), consistent_read=True)
    except UniqueModel.DoesNotExist:
        return False
    return claim.expires is None or claim.expires > datetime.now(UTC)  # TTL deletes lag: an expired one is gone
