"""The Webhook provider: one JSON POST describing the build, its artifacts (with download URLs) and variables."""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import urlsplit

from chalicelib import outbound
from chalicelib.deploy.base import Delivery, DeployFailed
from chalicelib.outbound import http

DEFAULT_TIMEOUT_MINUTES = 1.0


def deliver(delivery: Delivery) -> None:
    """POST the deployment's description to the url setting; any answer but 2xx fails the deployment."""
    url = delivery.setting("url")
    target = urlsplit(url)
    if target.scheme not in ("http", "https") or not target.hostname:
        raise DeployFailed(f"The Webhook provider needs an http(s) url, not {url!r}.")
    minutes = _timeout_minutes(delivery.setting("request_timeout"))
    delivery.stop_if_asked()
    headers = {"Content-Type": "application/json"}
    if delivery.setting("authorization"):
        headers["Authorization"] = delivery.setting("authorization")
    data = json.dumps(body(delivery)).encode()
    try:
        status = http.send("POST", url, data=data, headers=headers, timeout=minutes * 60)
    except outbound.Failed as error:
        raise DeployFailed(f"The webhook {error}") from None
    delivery.log(f"The webhook {outbound.shown(url)} answered {status}")


def body(delivery: Delivery) -> dict[str, Any]:
    """What the receiver gets, in AppVeyor's shape."""
    context = delivery.context
    return {
        "accountName": context.get("accountName"),
        "projectName": context.get("projectName"),
        "projectSlug": context.get("projectSlug"),
        "build": context.get("build"),
        "job": context.get("job"),
        "commit": context.get("commit"),
        "artifacts": [artifact.description() for artifact in delivery.artifacts],
        "environmentVariables": delivery.variables,
    }


def _timeout_minutes(setting: str) -> float:
    if not setting:
        return DEFAULT_TIMEOUT_MINUTES
    try:
        minutes = float(setting)
    except ValueError:
        minutes = 0
    if not (math.isfinite(minutes) and minutes > 0):
        raise DeployFailed(f"request_timeout is a number of minutes, not {setting!r}.")
    return minutes
