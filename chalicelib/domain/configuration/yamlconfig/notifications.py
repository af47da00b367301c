"""Notifications: a provider, its settings as written, and when to notify."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.domain.configuration.yamlconfig.scalars import Plain, Scalar
from chalicelib.domain.configuration.yamlconfig.sections import provider_settings, single
from chalicelib.domain.configuration.yamlconfig.syntax import (
    Json,
    Kind,
    boolean,
    dump,
    fail,
    items,
    load,
)
from chalicelib.errors import Invalid
from chalicelib.notify import providers as notifiers

_NOTIFICATION_FLAGS = {
    "on_build_success": "onBuildSuccess",
    "on_build_failure": "onBuildFailure",
    "on_build_status_changed": "onBuildStatusChanged",
}
# The providers Conveyor sends (any case), and for the chat ones every setting they take: a misspelt key would
# otherwise be a message never sent. MicrosoftTeams is Conveyor's own: AppVeyor has no Teams provider.
SENT_PROVIDERS = notifiers.names()  # notify/providers.py: Email, Webhook, Slack, MicrosoftTeams
CHAT_SETTINGS = {
    "slack": ("incoming_webhook", "auth_token", "channel", "template"),
    "microsoftteams": ("incoming_webhook", "template"),
}
# AppVeyor's other providers: refused when a project's settings add them, saying why and what to use instead.
_NOT_SENT = {
    "githubpullrequest": "Conveyor posts the build's state to its commit instead (docs/forges.md)",
    "hipchat": "HipChat was shut down in 2019",
    "campfire": "use a Webhook entry instead",
    "vsoteamroom": "team rooms were retired from Azure DevOps; use MicrosoftTeams",
}
# The settings of AppVeyor's other providers that hold credentials: sealed as secure values, though never sent.
UNSENT_CREDENTIALS = ("auth_token", "token", "access_token", "api_key", "password", "incoming_webhook")
MAX_NAME_SHOWN = 50  # of a provider's or key's name in a message: a repository's appveyor.yml may hold anything


def _loose(value: Any, path: str, seen: set[int]) -> Any:
    """Any YAML value as JSON, each scalar as the text it was written with."""
    if isinstance(value, Scalar):
        return value.text
    if isinstance(value, list | dict):
        if id(value) in seen:  # an alias: expanding it could take exponential time and space
            raise fail(path, "anchors and aliases are not supported in notification settings.")
        seen.add(id(value))
    if isinstance(value, list):
        return [_loose(item, f"{path}[{index}]", seen) for index, item in enumerate(value)]
    if isinstance(value, dict):
        return {str(key): _loose(item, f"{path}.{key}", seen) for key, item in value.items()}
    return value


def _write_loose(value: Any) -> Any:
    if isinstance(value, str):
        return Plain(value)
    if isinstance(value, list):
        return [_write_loose(item) for item in value]
    if isinstance(value, dict):
        return {Plain(key): _write_loose(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Refusal:
    """Why Conveyor would not send an entry: the key at fault ("" for the entry as a whole), and the reason, in
    words that stand alone in a build's message."""

    key: str
    reason: str

    def at(self, path: str) -> str:
        """The refusal as a settings 400 says it: ``notifications[1].provider: ...``."""
        return f"{path}.{self.key}: {self.reason}." if self.key else f"{path}: {self.reason}."


def provider_sent(notification: Json) -> bool:
    """Whether Conveyor sends the entry's provider at all (an AppVeyor provider it has no use for is taken with
    the rest of a project's settings, as other settings it does not honour are, and its builds say so)."""
    return str(notification.get("provider", "")).strip().lower() in {sent.lower() for sent in SENT_PROVIDERS}


def refusal(notification: Json) -> Refusal | None:
    """Why Conveyor would not send an entry (as read: ``{provider, settings, ...}``), or None: another provider, a
    chat setting it does not know or of the wrong form, or a chat entry that names no destination. Project settings
    refuse such an entry when it is new or changed; a build names the ones it did not send among its messages."""
    provider = str(notification.get("provider", ""))[:MAX_NAME_SHOWN]
    name = provider.strip().lower()
    if name not in {sent.lower() for sent in SENT_PROVIDERS}:
        why = _NOT_SENT.get(name, f"Conveyor sends {', '.join(SENT_PROVIDERS[:-1])} and {SENT_PROVIDERS[-1]}")
        return Refusal("provider", f"{provider} notifications are not supported: {why}")
    known = CHAT_SETTINGS.get(name)
    if known is None:
        return None
    written = notification.get("settings")
    settings: dict[str, Any] = written if isinstance(written, dict) else {}
    unknown = sorted(settings.keys() - set(known))
    if unknown:
        key = str(unknown[0])[:MAX_NAME_SHOWN]
        return Refusal(key, f"unknown {provider} setting {key}; expected one of {', '.join(known)}")
    given = {key for key, value in settings.items() if value not in (None, "")}
    for key in sorted(given):
        secret = key in ("incoming_webhook", "auth_token")  # credentials: text, or {secure: text}
        if not isinstance(settings[key], str) and not (secret and _is_secure(settings[key])):
            return Refusal(key, f"{key} must be a text value" + (" or {secure: ...}" if secret else ""))
    if name == "slack" and {"incoming_webhook", "auth_token"} <= given:
        return Refusal("", "a Slack entry takes incoming_webhook, or auth_token with channel, not both")
    if name == "slack" and "incoming_webhook" not in given and not {"auth_token", "channel"} <= given:
        return Refusal("", "a Slack entry needs incoming_webhook, or auth_token with channel")
    if name == "microsoftteams" and "incoming_webhook" not in given:
        return Refusal("", "a MicrosoftTeams entry needs incoming_webhook (the channel's webhook URL)")
    return None


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"} and isinstance(value["secure"], str)


def read_back(notification: Json) -> Json:
    """A stored entry as its appveyor.yml form reads back, which is what a GET and then a PUT of the settings send
    for it (the entry as stored when it has no such form)."""
    try:
        return _read_notification(load(dump("entry", _write_notification(notification)))["entry"], "entry")
    except (Invalid, KeyError, TypeError, ValueError, AttributeError):
        return notification


def _read_notification(item: Any, path: str) -> Json:
    provider, settings = provider_settings(item, path, "a list of mappings with a provider")
    notification: Json = {"provider": provider, "settings": {}}
    notification.update({field: False for field in _NOTIFICATION_FLAGS.values()})
    seen: set[int] = set()
    for name, value in settings.items():
        if name in _NOTIFICATION_FLAGS:
            notification[_NOTIFICATION_FLAGS[name]] = value is not None and boolean(value, f"{path}.{name}")
        elif name != "provider":
            notification["settings"][name] = _loose(value, f"{path}.{name}", seen)
    return notification


def _write_notification(notification: Json) -> Json:
    written: Json = {"provider": Plain(notification["provider"])}
    written.update(_write_loose(notification.get("settings", {})))
    written.update({name: bool(notification.get(field)) for name, field in _NOTIFICATION_FLAGS.items()})
    return written


NOTIFICATIONS = single(
    "notifications",
    "notifications",
    Kind(
        lambda value, path: [_read_notification(item, where) for item, where in items(value, path)],
        lambda notifications: [_write_notification(notification) for notification in notifications],
    ),
)
