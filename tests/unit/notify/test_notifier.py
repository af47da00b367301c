"""The notifiers' one interface: every notifier notify/providers.py declares is a module of notify/notifiers/ that
sends its entries' notices, and every such module is declared. No IO (nothing is sent)."""

from __future__ import annotations

import importlib
import pkgutil
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.core.builds import Build
from chalicelib.core.projects import Project
from chalicelib.notify import notices_of, notifiers, providers
from chalicelib.notify.notifier import Entry, Notice, Sender
from chalicelib.notify.notifiers import email, slack, teams, webhook
from chalicelib.notify.providers import NOTIFIERS, Notifier

NOW = datetime(2026, 3, 4, tzinfo=UTC)
PROJECT = Project(1, "acme", 2, "app", "App", "gitHub", "git", "acme/app", "hook", "1.0.{build}", {}, NOW)
BUILD = Build(1, 2, 3, 12, "1.0.12", "main", "refs/heads/main", {"commitId": "a" * 40}, {}, [], "success", NOW)
SETTINGS: dict[str, dict[str, Any]] = {  # an entry of each provider that sends one notice
    "Email": {"to": "ada@example.com"},  # the default subject and body
    "Webhook": {"url": "https://hooks.example.com/build", "body": "{{projectName}}"},
    "Slack": {"incoming_webhook": "https://hooks.slack.com/services/T000/B000/s3cr3t"},
    "MicrosoftTeams": {"incoming_webhook": "https://example.webhook.office.com/webhookb2/s3cr3t"},
}


def test_every_module_of_the_notifiers_is_declared_once() -> None:
    in_package = {info.name for info in pkgutil.iter_modules(notifiers.__path__)}

    assert sorted(notifier.module for notifier in NOTIFIERS) == sorted(in_package)
    assert {email, slack, teams, webhook} <= {
        importlib.import_module(f"{notifiers.__name__}.{name}") for name in in_package
    }


@pytest.mark.parametrize("notifier", NOTIFIERS, ids=lambda notifier: notifier.name)
def test_every_declared_notifier_is_a_sender_found_by_its_name_in_any_case(notifier: Notifier) -> None:
    module = importlib.import_module(f"chalicelib.notify.notifiers.{notifier.module}")

    assert isinstance(module, Sender)
    assert providers.named(f" {notifier.name.upper()} ") is notifier


@pytest.mark.parametrize("notifier", NOTIFIERS, ids=lambda notifier: notifier.name)
def test_an_entry_of_each_notifier_is_sent_through_its_module(notifier: Notifier) -> None:
    event = {"eventData": {"projectName": "app", "passed": True}}
    entry = Entry(SETTINGS[notifier.name], event, {"projectName": "app", "passed": True}, PROJECT, BUILD)

    sent = notices_of(notifier, entry)

    assert len(sent) == 1 and isinstance(sent[0], Notice)
    assert "s3cr3t" not in sent[0].shown  # logs name where it goes, never a secret path


def test_only_email_is_sent_for_a_pull_request_and_an_unknown_provider_is_none() -> None:
    assert [notifier.name for notifier in NOTIFIERS if notifier.pull_requests] == ["Email"]
    assert providers.named("GitHubPullRequest") is None
