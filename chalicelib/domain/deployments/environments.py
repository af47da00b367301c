"""Deployment environments: a named provider with its settings, variables and access key.

Secret values (``isEncrypted`` named values, ``secure`` notification settings) are kept as tokens bound to the
environment and field, exactly as project settings keep theirs, and shown only to callers who may change them.
The environment access key is a credential too: it is shown
in plain text once, in the response that creates the environment (an admin copies it to the agent machines),
and afterwards as its token, to callers who may manage or update environments only. Sending the token back
keeps the key; sending a new key replaces it (AppVeyor shows the key in plain text with every read).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from secrets import token_urlsafe
from typing import Any

from chalicelib import outbound
from chalicelib.core.environments import Environment
from chalicelib.deploy import providers
from chalicelib.deploy.destinations import delivery_binding, destinations
from chalicelib.domain.deployments.delivery_inputs import substitute
from chalicelib.domain.projects.project_settings import valid_named_values
from chalicelib.domain.shared import secrets
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH, invalid, valid_name
from chalicelib.domain.shared.warm_cache import WarmCache
from chalicelib.domain.team.auth import Caller
from chalicelib.domain.team.permissions import Permission
from chalicelib.errors import Conflict, Invalid, NotFound
from chalicelib.store import counters
from chalicelib.store import environments as store
from chalicelib.store import projects as project_store
from chalicelib.store.environments import ENVIRONMENT_NOT_FOUND

PROVIDERS = providers.names()  # deploy/providers.py declares each
MIN_ACCESS_KEY_LENGTH = 16
MAX_ACCESS_KEY_LENGTH = 128
MAX_ACCESS_KEY_FIELD_LENGTH = 1024  # environmentAccessKey in an update: a new key, or the token shown for the key
MAX_NAMED_VALUES = 200  # per array: each secret costs a KMS call
HOST_SETTINGS = providers.host_settings()  # provider settings the service connects to
ACCESS_KEY_FIELD = secrets.ACCESS_KEY_FIELD  # the field an access key's token is bound to
INLINE_PROJECTS = "inlineDeploymentProjectIds"  # the settings' list of projects whose appveyor.yml may deploy here
MAX_INLINE_PROJECTS = 200
MAX_SETTINGS_BYTES = 300_000  # the stored settings, secrets encrypted, must fit a DynamoDB item (400 KB)


@dataclass(frozen=True)
class EnvironmentInput:
    """What an add or update request sets; ``None`` provider, notifications or key: keep what is stored."""

    name: str
    provider: str | None
    provider_settings: Any
    environment_variables: Any
    notifications: Any = None
    access_key: str | None = None
    inline_projects: Any = None  # projectIds whose appveyor.yml may deploy here; None: keep what is stored


@dataclass(frozen=True)
class EnvironmentDetails:
    """An environment as a response shows it: its secrets' tokens and access key only to those who may change
    them (the key in plain text once, when made)."""

    environment: Environment
    access_key: str | None


def list_environments(caller: Caller) -> list[Environment]:
    """Every environment of the caller's account."""
    return store.list_environments(caller.account_id)


def get_environment(caller: Caller, environment_id: int) -> Environment:
    """One environment of the caller's account; NotFound otherwise."""
    environment = store.get_environment(caller.account_id, environment_id)
    if environment is None:
        raise NotFound(ENVIRONMENT_NOT_FOUND)
    return environment


def environment_settings(caller: Caller, environment_id: int) -> EnvironmentDetails:
    """GET .../settings: the environment, with its access key for those who manage environments."""
    return _details(caller, get_environment(caller, environment_id))


def add_environment(caller: Caller, request: EnvironmentInput) -> EnvironmentDetails:
    """A new environment with a freshly generated access key."""
    name = _free_name(caller, request.name)
    if request.provider is None:
        raise invalid("provider", "provider is required.")
    provider = valid_provider(request.provider)
    access_key = token_urlsafe(24)
    drafted = Environment(
        account_id=caller.account_id,
        environment_id=counters.next_value(counters.ENVIRONMENTS),
        name=name,
        provider=provider,
        access_key="",
        access_key_hash=access_key_hash(access_key),
        settings={},
        created=datetime.now(UTC),
    )
    environment = replace(drafted, settings=_protected_settings(drafted, request, {}))
    token = secrets.encrypt(secrets.environment_owner(environment), ACCESS_KEY_FIELD, access_key)
    environment = replace(environment, access_key=token)
    store.add_environment(environment)
    return EnvironmentDetails(environment, access_key)  # the only time the key is shown in plain text


def update_environment(caller: Caller, environment_id: int, request: EnvironmentInput) -> EnvironmentDetails:
    """PUT /api/environments: rename, change the provider and settings, rotate the access key."""
    before = get_environment(caller, environment_id)
    name = valid_name(request.name, "name", MAX_NAME_LENGTH)
    if store.environment_name_key(name) != store.environment_name_key(before.name):
        _free_name(caller, name)
    after = replace(
        before, name=name, provider=before.provider if request.provider is None else valid_provider(request.provider)
    )
    if _replaces_access_key(before, request.access_key):
        key = valid_access_key(request.access_key or "")
        if store.access_key_taken(access_key_hash(key)):
            raise Conflict("That environment access key is in use; choose another.")
        token = secrets.encrypt(secrets.environment_owner(before), ACCESS_KEY_FIELD, key)
        after = replace(after, access_key=token, access_key_hash=access_key_hash(key))
    # new secrets are bound to where the environment delivers from now on: its new provider, destination or key
    after = replace(after, settings=_protected_settings(after, request, before.settings))
    _secrets_stay_put(before, after)
    return _details(caller, store.save_environment(before, after))


def delete_environment(caller: Caller, environment_id: int) -> None:
    """Delete the environment (its deployments keep the summary they were started with)."""
    store.delete_environment(get_environment(caller, environment_id))


# An agent reports its log every second or so, and each report masks the environment's secrets: their plain values
# are kept a few seconds (a token always decrypts to the same value) rather than asked of KMS each time.
_decrypted: WarmCache[str] = WarmCache()


def environment_values(
    environment: Environment, left_out: list[str] | None = None
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Provider settings and environment variables by name, secrets decrypted, and the secrets (to mask).

    A secret that does not decrypt for this environment as it delivers now (its provider, an Agent's key) raises
    Invalid; with ``left_out``, it is left out instead (unset) and its field named there."""
    secret_values: list[str] = []
    owner = secrets.environment_owner(environment)

    def plain(values: list[dict[str, Any]], kind: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for entry in values:
            value = entry["value"].get("value") or ""
            if entry["value"].get("isEncrypted") and value:
                field = f"{kind}/{entry['name']}"
                try:
                    value = _decrypted.get((owner, field, value), partial(secrets.decrypt, owner, field, value))
                except Invalid:
                    if left_out is None:
                        raise
                    left_out.append(f"{kind} {entry['name']}")
                    continue
                if value not in secret_values:
                    secret_values.append(value)
            found[entry["name"]] = value
        return found

    settings = environment.settings
    return (
        plain(settings.get("providerSettings", []), "setting"),
        plain(settings.get("environmentVariables", []), "variable"),
        secret_values,
    )


def rebound_settings(environment: Environment) -> dict[str, Any] | None:
    """The environment's settings with every delivered secret bound to where it delivers now (its provider and
    destination, an Agent's key): tokens made before that binding (bound to its provider alone, to the environment
    alone, or ``cvy1:`` to the account) re-encrypted; None when none needs it. For the migration of stored
    environments."""
    owner = secrets.environment_owner(environment)
    earlier = [  # how its tokens were bound before: to its provider (and an Agent's key) alone, to nothing
        replace(owner, binding=delivery_binding(environment.provider, environment.access_key_hash)),
        replace(owner, binding=""),
    ]
    settings = copy.deepcopy(environment.settings)
    changed = False
    for holder, key, field in _delivered_secrets(settings):
        token = holder[key]
        if not isinstance(token, str) or not secrets.is_token(token):
            continue
        if token.startswith(secrets.TOKEN_PREFIX):
            try:
                secrets.decrypt(owner, field, token)
                continue  # bound already
            except Invalid:
                pass
        plain = _decrypted_as_before(earlier, field, token)
        if plain is None:
            continue  # not this environment's: it stays, and its deployments say so
        holder[key] = secrets.encrypt(owner, field, plain)
        changed = True
    return settings if changed else None


def _decrypted_as_before(earlier: list[secrets.Owner], field: str, token: str) -> str | None:
    """The plain value of a token made with one of the ``earlier`` bindings, or None."""
    for owner in earlier:
        try:
            return secrets.decrypt(owner, field, token)
        except Invalid:
            continue
    return None


def find_environment_by_access_key(access_key: str) -> Environment | None:
    """The environment an agent's access key belongs to, or None."""
    return store.get_environment_by_access_key_hash(access_key_hash(access_key))


def access_key_hash(access_key: str) -> str:
    """How an access key is found without being stored in plain text: its SHA-256, in hex."""
    return hashlib.sha256(access_key.encode()).hexdigest()


def valid_provider(provider: str) -> str:
    """The canonical spelling of a provider name (matched without regard to case); a 400 naming the allowed ones."""
    for known in PROVIDERS:
        if known.lower() == provider.strip().lower():
            return known
    raise invalid("provider", f"provider '{provider}' is not one of: {', '.join(PROVIDERS)}.")


def valid_access_key(access_key: str) -> str:
    """A new access key a client chose: long enough to be unguessable, and sendable in a header."""
    if not MIN_ACCESS_KEY_LENGTH <= len(access_key) <= MAX_ACCESS_KEY_LENGTH or not all(
        character.isascii() and character.isprintable() and not character.isspace() for character in access_key
    ):
        raise invalid(
            "environmentAccessKey",
            f"environmentAccessKey must be {MIN_ACCESS_KEY_LENGTH} to {MAX_ACCESS_KEY_LENGTH} printable ASCII "
            "characters without spaces.",
        )
    return access_key


def _details(caller: Caller, environment: Environment) -> EnvironmentDetails:
    if caller.can(Permission.MANAGE_ENVIRONMENTS) or caller.can(Permission.UPDATE_ENVIRONMENT_SETTINGS):
        return EnvironmentDetails(environment, environment.access_key)
    return EnvironmentDetails(replace(environment, settings=secrets.without_secrets(environment.settings)), None)


def _replaces_access_key(environment: Environment, sent: str | None) -> bool:
    """Whether an update's environmentAccessKey is a new key: not absent, not the token shown, not the key itself."""
    if sent is None or sent == environment.access_key or access_key_hash(sent) == environment.access_key_hash:
        return False
    if secrets.is_token(sent):
        raise invalid(
            "environmentAccessKey",
            "environmentAccessKey is not this environment's key token: send the token back to keep the key, "
            "or a new key to replace it.",
        )
    return True


def _free_name(caller: Caller, name: str) -> str:
    name = valid_name(name, "name", MAX_NAME_LENGTH)
    if store.name_taken(caller.account_id, name):
        raise Conflict(f"An environment named '{name}' already exists.")
    return name


def _protected_settings(environment: Environment, request: EnvironmentInput, stored: dict[str, Any]) -> dict[str, Any]:
    """The settings to store for ``environment`` (its provider and key as they will be): checked, in canonical form,
    new secrets encrypted bound to where it delivers with them, stored tokens kept."""
    settings = {
        "providerSettings": _named_values(request.provider_settings, "settings.providerSettings"),
        "environmentVariables": _named_values(request.environment_variables, "settings.environmentVariables"),
        "notifications": copy.deepcopy(stored.get("notifications", []))
        if request.notifications is None
        else _notifications(request.notifications),
        INLINE_PROJECTS: list(stored.get(INLINE_PROJECTS, []))
        if request.inline_projects is None
        else _inline_projects(environment.account_id, request.inline_projects),
    }
    _check_hosts(settings)
    owner = secrets.environment_owner(replace(environment, settings=settings))
    secrets.protect_document(owner, settings, stored, "settings")
    size = len(json.dumps(settings))
    if size > MAX_SETTINGS_BYTES:
        raise invalid(
            "settings",
            f"settings would be {size} bytes long as stored; at most {MAX_SETTINGS_BYTES} bytes are allowed.",
        )
    return settings


def _secrets_stay_put(before: Environment, after: Environment) -> None:
    """Refuse an update that sends stored secrets somewhere else without sending them again: who may update an
    environment sees its secrets' tokens only, and must not get the plain values by pointing the deployment at a
    host of their own (a server, URL or endpoint, or a variable one names), at another provider (an Agent, which
    hands every setting and variable to the machine that asks), or at an access key of their own."""
    if _destination(after) == _destination(before):
        return
    stored = {holder[key] for holder, key, _ in _delivered_secrets(before.settings)}
    if any(holder[key] in stored for holder, key, _ in _delivered_secrets(after.settings)):
        raise invalid(
            "settings",
            "The deployment's destination changed (its provider, an Agent's access key, or where it delivers): send "
            "its secure values again (a stored one goes only to the destination it was set for).",
        )


def _destination(environment: Environment) -> tuple[str, str]:
    """Where an environment's deployments hand its secrets: its provider (and an Agent's key), and each destination
    setting with the environment's own variables in it (secure ones as their tokens, which change when set again)."""
    settings = environment.settings
    variables = {
        entry["name"]: str(entry["value"].get("value") or "") for entry in settings.get("environmentVariables", [])
    }
    written = [  # a secure one (a secret URL) as its token: sent anew, it moves the others too
        {"name": entry["name"], "value": {"value": substitute(str(entry["value"].get("value") or ""), variables)}}
        for entry in settings.get("providerSettings", [])
    ]
    binding = delivery_binding(environment.provider, environment.access_key_hash, environment.settings)
    return binding, destinations(written)


def _delivered_secrets(settings: dict[str, Any]) -> list[tuple[dict[str, Any], str, str]]:
    """The secrets a deployment hands over: the provider settings' and the variables' (not the notifications')."""
    return [found for found in secrets.secret_fields(settings) if found[2].startswith(secrets.BOUND_TO_DELIVERY)]


def _check_hosts(settings: dict[str, Any]) -> None:
    """Refuse, when saved, a server or URL setting the service would refuse to connect to (checked again at use)."""
    for entry in settings["providerSettings"]:
        value = entry["value"]
        if entry["name"].lower() in HOST_SETTINGS and not value.get("isEncrypted") and value.get("value"):
            refusal = outbound.url_refusal(value["value"])
            if refusal:
                raise invalid("settings.providerSettings", f"{entry['name']}: {refusal}")
    for notification in settings["notifications"]:
        url = (notification.get("settings") or {}).get("url") if isinstance(notification, dict) else None
        if isinstance(url, str) and (refusal := outbound.url_refusal(url)):
            raise invalid("settings.notifications", f"url: {refusal}")


def inline_deployment_projects(environment: Environment) -> list[int]:
    """The projects whose appveyor.yml may deploy to the environment (``deploy: provider: Environment``); none for
    an environment stored before the list existed (issue 34: nobody listed, nobody deploys from a repository)."""
    return list(environment.settings.get(INLINE_PROJECTS, []))


def _inline_projects(account_id: int, sent: Any) -> list[int]:
    """The projectIds sent, each a project of the account, once each, in the order sent."""
    field = f"settings.{INLINE_PROJECTS}"
    if not isinstance(sent, list) or not all(type(item) is int for item in sent):
        raise invalid(field, f"{field} must be an array of projectIds.")
    if len(sent) > MAX_INLINE_PROJECTS:
        raise invalid(field, f"{field} may hold at most {MAX_INLINE_PROJECTS} projects.")
    chosen = list(dict.fromkeys(sent))
    for project_id in chosen:
        if project_id < 1 or project_store.get_project_by_id(account_id, project_id) is None:
            raise invalid(field, f"{field}: the account has no project {project_id}.")
    return chosen


def _named_values(values: Any, field: str) -> list[dict[str, Any]]:
    """Named values in their stored form: ``{name, value: {isEncrypted[, value]}}``; an empty secret has no value."""
    if isinstance(values, list) and len(values) > MAX_NAMED_VALUES:
        raise invalid(field, f"{field} may hold at most {MAX_NAMED_VALUES} values.")
    canonical = []
    for entry in valid_named_values(values, field):
        is_encrypted = bool(entry["value"].get("isEncrypted", False))
        value: dict[str, Any] = {"isEncrypted": is_encrypted}
        if entry["value"].get("value") is not None and not (is_encrypted and entry["value"]["value"] == ""):
            value["value"] = entry["value"]["value"]
        canonical.append({"name": entry["name"], "value": value})
    return canonical


def _notifications(notifications: Any) -> list[dict[str, Any]]:
    if not isinstance(notifications, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("provider"), str) and entry["provider"].strip()
        for entry in notifications
    ):
        raise invalid("settings.notifications", "settings.notifications must be an array of objects with a provider.")
    return copy.deepcopy(notifications)
