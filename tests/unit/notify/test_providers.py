"""The notifiers' declarations (chalicelib/notify/providers.py): each has its module and its settings in
docs/api.md, the settings that bind secrets never lose one, and where an entry sends reads as it is bound."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from chalicelib.domain.shared import secrets
from chalicelib.notify import providers
from chalicelib.notify.destinations import notification_destination
from chalicelib.notify.providers import NOTIFIERS, Notifier

API_DOCS = Path(__file__).resolve().parents[3] / "docs" / "api.md"
# What stored tokens are bound to (issue 34, third review): one gone would bind new secrets less strictly, and
# leave the stored ones of an entry that sets it undecryptable.
BOUND_SETTINGS = ("url", "incoming_webhook", "channel", "to", "toaddress", "recipients")


@pytest.mark.parametrize("notifier", NOTIFIERS, ids=lambda notifier: notifier.name)
def test_a_notifier_has_its_module_and_its_destinations_in_the_docs(notifier: Notifier) -> None:
    importlib.import_module(f"chalicelib.notify.notifiers.{notifier.module}")
    section = API_DOCS.read_text().split("## Notifications", 1)[1].split("\n## ", 1)[0]

    assert f"`{notifier.name}`" in section
    assert all(f"`{name}`" in section for name in notifier.destinations)


def test_no_setting_that_binds_secrets_is_lost() -> None:
    assert set(BOUND_SETTINGS) <= set(providers.destination_settings())


def test_an_entry_is_bound_to_its_provider_in_any_case_and_its_plain_destinations_as_written() -> None:
    slack = {"provider": " slack", "settings": {"auth_token": {"secure": "cvy2:x"}, "Channel": " #Builds"}}
    email = {"provider": "Email", "settings": {"to": ["A@example.com", "b@example.com"], "subject": "hi"}}
    hidden = {"provider": "Webhook", "settings": {"url": {"secure": "cvy2:y"}, "method": "PUT"}}

    assert notification_destination(slack) == "@slack:channel=#Builds"  # a URL's path has case: values keep it
    assert notification_destination(email) == "@email:to=A@example.com,b@example.com"
    assert notification_destination(hidden) == "@webhook:"  # a secure url binds nothing
    assert secrets.hidden_notification_destinations(hidden) == []  # alone: nothing to hide it beside
    beside = {**hidden, "settings": {**hidden["settings"], "authorization": {"secure": "cvy2:z"}}}
    assert secrets.hidden_notification_destinations(beside) == ["url"]


def test_a_url_binds_the_secrets_of_an_entry_of_any_provider_and_a_long_one_by_its_digest() -> None:
    entry = {"provider": "GitHubPullRequest", "settings": {"url": "https://hooks.example.com/" + "x" * 2000}}

    bound = notification_destination(entry)

    assert bound.startswith("@githubpullrequest:sha256=") and len(bound) < 100
