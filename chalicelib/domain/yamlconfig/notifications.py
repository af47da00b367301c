"""Notifications: a provider, its settings as written, and when to notify."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.yamlconfig.scalars import Plain, Scalar
from chalicelib.domain.yamlconfig.sections import provider_settings, single
from chalicelib.domain.yamlconfig.syntax import (
    Json,
    Kind,
    boolean,
    fail,
    items,
)

_NOTIFICATION_FLAGS = {
    "on_build_success": "onBuildSuccess",
    "on_build_failure": "onBuildFailure",
    "on_build_status_changed": "onBuildStatusChanged",
}


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
