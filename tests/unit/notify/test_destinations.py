"""Where a notifications entry sends, as its secure settings are bound to it: its provider in any case and its
plain destination settings as written, values keeping their case. No IO."""

from __future__ import annotations

from chalicelib.notify.destinations import MAX_DESTINATION_CHARS, NOTIFICATION_DESTINATIONS, notification_destination


def test_a_webhook_entry_is_bound_to_its_url_as_written() -> None:
    entry = {"provider": "Webhook", "settings": {"url": "https://hooks.example.com/Team-A", "method": "PUT"}}

    assert notification_destination(entry) == "@webhook:url=https://hooks.example.com/Team-A"


def test_a_destination_that_is_not_text_is_bound_as_json_and_no_entry_binds_nothing() -> None:
    entry = {"provider": "webhook", "settings": {"url": {"host": "b", "path": "a"}}}

    assert notification_destination(entry) == '@webhook:url={"host": "b", "path": "a"}'
    assert notification_destination(None) == ""


def test_a_destination_longer_than_a_context_holds_is_bound_by_its_digest() -> None:
    entry = {"provider": "webhook", "settings": {"url": "x" * MAX_DESTINATION_CHARS}}

    assert notification_destination(entry).startswith("@webhook:sha256=")
    assert "url" in NOTIFICATION_DESTINATIONS
