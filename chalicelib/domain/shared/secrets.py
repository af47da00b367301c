"""Secret values at rest: encrypted with the stage's KMS key, bound to the object and field that own them.

A secret is stored, and shown to clients, as an opaque token: ``cvy2:`` and the base64 KMS ciphertext. Its
KMS encryption context names the account, the owning object (``project/12``, ``environment/3``) and the
field (``variable/DB_PASSWORD``, ``setting/password``, ``notification/authorization``, ``webhookSecret``...),
so a token decrypts only where it was made: copied into another project's appveyor.yml, another variable or
another environment, KMS refuses it. A client that sends back the token stored in its place keeps the secret; any
other token is refused (an older one of that place would bring back a secret set again since, or one set for a
destination moved since); anything else is a new plain value, which is encrypted before it is stored. Plain text
never leaves the service except into the build or the delivery that uses it.

An environment's settings and variables are bound, besides, to where its deployments deliver them: its provider
and its destination settings as written (``setting/password@FTP:server=ftp.example.com``, as an appveyor.yml deploy:
entry's), or an Agent environment's access key (``setting/password@Agent:<key hash>``). Changed to another provider
or destination, or handed to another agent's key, the stored tokens no longer decrypt: the secrets go only where
they were set for. Where a deployment delivers is deploy/destinations.py's to say.

A notifications entry's secure settings are bound, besides, to where the entry sends: its provider and the
settings naming its receiver as written (``notification/auth_token@webhook:url=https://hooks.example.com``;
notify/destinations.py says where an entry sends), so that a token set for one receiver, moved into another entry,
decrypts nowhere.

A value encrypted with ``POST /api/account/encrypt`` (AppVeyor's endpoint: what tools put after ``secure:`` in a
repository's appveyor.yml) is bound to the caller's account (``cvya:``) or, with ``projectSlug``, to one project of it
(``cvyp:``), but to no field: in a build of any project of that account (of that project), as AppVeyor's in any
project of the account, it decrypts into an environment variable, and into nothing else: a notification's or a
deploy entry's secret is sent to the destination its entry names, which whoever pushes appveyor.yml writes, so only
a token bound to that destination decrypts there (a value copied from one project's settings, pasted into another's
webhook header aimed at the pusher's server, would be sent there). Sent in settings (any form), it is stored as the
field's own token, so stored settings never hold a value that decrypts elsewhere. A ``secure:`` value of another
service (AppVeyor's, encrypted with its account's key) decrypts nowhere here, and is never taken for a plain value
(``foreign_ciphertext``).

Tokens made before secrets were bound to their owner (``cvy1:``, bound to the account only) keep working
where they are stored, and only there: an owner accepts a legacy token found in its own stored settings for the
field it is stored at, as it accepts a bound token for its own field alone. Copied into the repository's
appveyor.yml under another field (a variable's token as a notification's header, aimed at a pusher's server), it
decrypts nowhere (fourth review).
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from chalicelib.core.environments import Environment
from chalicelib.core.projects import Project
from chalicelib.deploy.destinations import DESTINATION_SETTINGS, delivery_binding, deploy_destination
from chalicelib.domain.shared.validation import invalid
from chalicelib.errors import Invalid
from chalicelib.notify.destinations import NOTIFICATION_DESTINATIONS, notification_destination
from chalicelib.protocol.logstream import MIN_SECRET_CHARS  # the log masks no shorter value
from chalicelib.store import keys

TOKEN_PREFIX = "cvy2:"
LEGACY_TOKEN_PREFIX = "cvy1:"  # bound to the account only: accepted where stored, never made any more
ACCOUNT_VALUE_PREFIX = "cvya:"  # POST /api/account/encrypt's: any project of the account, any field
PROJECT_VALUE_PREFIX = "cvyp:"  # ... with projectSlug: that project only, any field
ENCRYPTED_VALUE_PREFIXES = (ACCOUNT_VALUE_PREFIX, PROJECT_VALUE_PREFIX)
ENCRYPTED_VALUE_FIELD = "encryptedValue"  # the field such a value is bound to: no stored secret's field is named so
ENCRYPTED_VALUE_TARGETS = ("variable/",)  # the fields such a value decrypts into in a build: environment variables
HOW_TO_ENCRYPT = (
    'Encrypt the plain value for Conveyor: POST /api/account/encrypt with {"plainValue": "..."} (and "projectSlug" '
    "to bind it to one project) answers the text to put after secure:."
)
WEBHOOK_SECRET_FIELD = "webhookSecret"  # the field a project's webhook secret's token is bound to
ACCESS_KEY_FIELD = "accessKey"  # the field an environment's access key's token is bound to
MAX_SECRET_BYTES = 4096  # what KMS encrypts in one call
MAX_NEW_SECRETS = 200  # secure values one request may set (or send tokens of): each costs a KMS call
_VARIABLE_LISTS = frozenset({"environmentVariables", "variables", "onEnvironmentVariables"})
_SETTING_LISTS = frozenset({"providerSettings"})
BOUND_TO_DELIVERY = ("setting/", "variable/")  # an environment's fields a deployment hands over (notifications: not)
_ENTRIES = "notification entries"  # _walk's place: the entries of a notifications list


def is_token(value: str) -> bool:
    """Whether a value is a secret's token (of any owner), not a plain value."""
    return value.startswith((TOKEN_PREFIX, LEGACY_TOKEN_PREFIX, *ENCRYPTED_VALUE_PREFIXES))


def is_encrypted_value(value: Any) -> bool:
    """Whether a value was made by POST /api/account/encrypt (bound to an account or a project, not a field)."""
    return isinstance(value, str) and value.startswith(ENCRYPTED_VALUE_PREFIXES)


def foreign_ciphertext(value: Any) -> bool:
    """Whether a ``secure:`` value looks encrypted by another service, which Conveyor cannot decrypt: AppVeyor's are
    the base64 of whole 16-byte blocks (AES). Such a value is never taken for a plain one, nor made a variable's."""
    if not isinstance(value, str) or is_token(value) or len(value) < 24:
        return False
    try:
        blob = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(blob) % 16 == 0


def encrypted_value(account_id: int, project_id: int | None, plain: str) -> str:
    """The text to put after ``secure:`` for ``plain`` in the account's projects (``project_id``: that one only)."""
    prefix = ACCOUNT_VALUE_PREFIX if project_id is None else PROJECT_VALUE_PREFIX
    blob = keys.encrypt(plain.encode(), _value_context(account_id, project_id))
    return prefix + base64.b64encode(blob).decode()


def _value_context(account_id: int, project_id: int | None) -> dict[str, str]:
    owner = f"account/{account_id}" if project_id is None else f"project/{project_id}"
    return {"conveyor-account": str(account_id), "conveyor-owner": owner, "conveyor-field": ENCRYPTED_VALUE_FIELD}


@dataclass(frozen=True)
class Owner:
    """The object secrets belong to: ``kind`` ``object_id`` of the account, and its legacy tokens."""

    account_id: int
    kind: str  # "project", "environment"
    object_id: int
    legacy: frozenset[tuple[str, str]] = frozenset()  # (field, cvy1 token) of the object's own stored settings
    binding: str = ""  # an environment's: where its deployments deliver (``@FTP``, ``@Agent:<key hash>``)

    @classmethod
    def of(cls, kind: str, account_id: int, object_id: int, settings: Any, tokens: Mapping[str, Any]) -> Owner:
        """The owner of the secrets in its stored ``settings`` and its other stored ``tokens`` (by field): each
        legacy token among them is accepted for the field it is stored at, and no other."""
        stored = [(field, holder[key]) for holder, key, field in secret_fields(settings)]
        stored += list(tokens.items())
        legacy = {(field, token) for field, token in stored if _is_legacy(token)}
        return cls(account_id, kind, object_id, frozenset(legacy))

    def context(self, field: str) -> dict[str, str]:
        bound = field + self.binding if field.startswith(BOUND_TO_DELIVERY) else field
        return {
            "conveyor-account": str(self.account_id),
            "conveyor-owner": f"{self.kind}/{self.object_id}",
            "conveyor-field": bound,
        }

    def describe(self, field: str) -> str:
        return f"this {self.kind}'s {_words(field)}"


def project_owner(project: Project) -> Owner:
    """Who a project's secrets belong to: its variables, settings, notifications and webhook secret."""
    stored = {WEBHOOK_SECRET_FIELD: project.webhook_secret}
    return Owner.of("project", project.account_id, project.project_id, project.configuration, stored)


def environment_owner(environment: Environment) -> Owner:
    """Who an environment's secrets belong to: its settings, variables, notifications and access key; its settings'
    and variables' bound to where it delivers them."""
    stored = {ACCESS_KEY_FIELD: environment.access_key}
    owner = Owner.of("environment", environment.account_id, environment.environment_id, environment.settings, stored)
    where = delivery_binding(environment.provider, environment.access_key_hash, environment.settings)
    return replace(owner, binding=where)


def encrypt(owner: Owner, field: str, plain: str) -> str:
    """The token of a new secret of ``owner``'s ``field``."""
    blob = keys.encrypt(plain.encode(), owner.context(field))
    return TOKEN_PREFIX + base64.b64encode(blob).decode()


def decrypt(owner: Owner, field: str, token: str) -> str:
    """The plain value behind a token of ``owner``'s ``field``; Invalid for anything else. A value of POST
    /api/account/encrypt decrypts only into a project's environment variables (ENCRYPTED_VALUE_TARGETS)."""
    if is_encrypted_value(token) and not field.startswith(ENCRYPTED_VALUE_TARGETS):
        raise Invalid(
            f"A secure value is not a secret of {owner.describe(field)}: a value of POST /api/account/encrypt "
            "decrypts only into a build's environment variables; a notification's or a deployment's secret is set "
            "in the project's settings, whose token is bound to where it is sent."
        )
    return _decrypted(owner, field, token)


def _decrypted(owner: Owner, field: str, token: str) -> str:
    """``decrypt``'s, a value of POST /api/account/encrypt taken at any field (settings store it as the field's own
    token: whoever may change them may set the field's value)."""
    if token.startswith(TOKEN_PREFIX):
        context = owner.context(field)
    elif token.startswith(LEGACY_TOKEN_PREFIX) and (field, token) in owner.legacy:  # where it is stored, only
        context = {"conveyor-account": str(owner.account_id)}
    elif is_encrypted_value(token) and owner.kind == "project":  # made for the account's (or this) project
        bound = owner.object_id if token.startswith(PROJECT_VALUE_PREFIX) else None
        context = _value_context(owner.account_id, bound)
    else:
        raise Invalid(f"A secure value is not a secret of {owner.describe(field)}.")
    try:
        blob = base64.b64decode(token[token.index(":") + 1 :], validate=True)
        plain = keys.decrypt(blob, context)
    except (binascii.Error, ValueError, keys.Undecryptable) as error:
        made = " (it was encrypted for another account or project)" if is_encrypted_value(token) else ""
        raise Invalid(f"A secure value is not a secret of {owner.describe(field)}{made}.") from error
    return plain.decode()


def protect(owner: Owner, field: str, value: str, kept: Collection[str]) -> str:
    """The stored form of a secret a client sent: a token in ``kept`` (stored there now) as it is; any other token
    is refused (one read before the secret was set again would bring the old secret back); any other value is a new
    plain secret and is encrypted."""
    if value in kept:
        return value
    if is_encrypted_value(value):  # made for the account or project: stored as this field's own token
        return encrypt(owner, field, _decrypted(owner, field, value))
    if is_token(value):
        decrypt(owner, field, value)  # another owner's or field's: refused as such
        raise Invalid(
            f"The token sent for {owner.describe(field)} is not the one stored there now: a secret set again, or set "
            "for a destination moved since, leaves its old token behind."
        )
    return encrypt(owner, field, value)


def secret_fields(document: Any) -> Iterator[tuple[dict[str, Any], str, str]]:
    """Every secret inside a JSON document (settings, YAML), as (the object holding it, its key, its field):
    ``{"isEncrypted": true, "value": ...}`` named values (field ``variable/NAME`` or ``setting/NAME``), and
    ``{"secure": ...}`` notification settings (field ``notification/KEY@`` where its entry sends). A project's
    appveyor.yml deploy: entry binds its settings' secrets to where it delivers them (``setting/NAME@`` its
    destination), and a notifications entry to where it sends: one who may push a branch cannot point the entry,
    or the secret in another entry, at a server of their own."""
    return _walk(document, "", "")


def notification_secrets(document: Any) -> Iterator[tuple[dict[str, Any], str, str, str]]:
    """Every notification secret inside a JSON document, as (the object holding it, its key, its field, its field
    as notification secrets were bound before they were bound to where their entry sends: ``notification/KEY``)."""
    legacy = _walk(document, "", "", legacy=True)
    for (holder, key, field), (_, _, before) in zip(_walk(document, "", ""), legacy, strict=True):
        if field.startswith("notification/"):
            yield holder, key, field, before


def notification_field(key: str, destination: str) -> str:
    """The field of a notifications entry's secure setting ``key``, the entry sending to ``destination``."""
    return f"notification/{key}{destination}"


def hidden_notification_destinations(entry: Any) -> list[str]:
    """A notifications entry's destination settings that are secure beside other secure settings: a secure
    destination is no part of what the entry's secrets are bound to (``notification_destination``), so it would
    take them to a receiver of whoever may set it. Empty when there are none."""
    settings = entry.get("settings") if isinstance(entry, dict) else None
    if not isinstance(settings, dict):
        return []
    hidden = [str(name) for name, value in settings.items() if str(name).lower() in NOTIFICATION_DESTINATIONS]
    hidden = [name for name in hidden if _is_secure(settings[name])]
    secure = sum(1 for _ in _walk(settings, "notifications", ""))
    return hidden if hidden and secure > len(hidden) else []


def _check_secure_destinations(node: Any, field: str) -> None:
    """Refuse a deploy entry (``provider`` and ``providerSettings``) whose destination is secure beside other
    secrets: a secure destination is no part of what its secrets are bound to (``destinations``), so one added
    beside a stored password would take it to a server of whoever may change the settings."""
    if isinstance(node, list):
        for child in node:
            _check_secure_destinations(child, field)
        return
    if not isinstance(node, dict):
        return
    if "provider" in node and (hidden_notification := hidden_notification_destinations(node)):
        raise invalid(
            field,
            f"A notification's {', '.join(hidden_notification)} is secure beside other secure settings: write "
            "where it sends in plain text, for its secrets go only to the receiver they were set for.",
        )
    entries = node.get("providerSettings")
    if "provider" in node and isinstance(entries, list):
        named = [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("name"), str)]
        secure = [entry["name"] for entry in named if _is_secure(entry.get("value"))]
        hidden = [name for name in secure if name.lower() in DESTINATION_SETTINGS]
        if hidden and len(hidden) < len(secure):
            raise invalid(
                field,
                f"A deploy entry's {', '.join(hidden)} is secure beside other secure settings: name its destination "
                "in plain text, for its secrets go only to the destination they were set for.",
            )
    for child in node.values():
        _check_secure_destinations(child, field)


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("isEncrypted") is True or set(value) == {"secure"})


def _walk(
    node: Any, within: str, field: str, bound: str = "", legacy: bool = False
) -> Iterator[tuple[dict[str, Any], str, str]]:
    """The secrets under ``node``; ``legacy``: notification secrets' fields as they were bound before they were
    bound to where their entry sends."""
    if isinstance(node, list):
        for child in node:
            yield from _walk(child, within, field, bound, legacy)
        return
    if not isinstance(node, dict):
        return
    if within == _ENTRIES:  # a notifications entry: its secrets are bound to where it sends
        within, bound = "notifications", "" if legacy else notification_destination(node)
    if node.get("isEncrypted") is True and "value" in node:
        yield node, "value", field
    elif set(node) == {"secure"}:
        yield node, "secure", field
    named = isinstance(node.get("name"), str) and "value" in node
    for key, child in node.items():
        if named and key == "value":
            kind = "variable" if within in _VARIABLE_LISTS else "setting"
            where = bound if within in _SETTING_LISTS else ""  # a deploy entry's settings: bound to its destination
            yield from _walk(child, within, f"{kind}/{node['name']}{where}", "", legacy)
        elif key in _SETTING_LISTS:
            yield from _walk(child, key, "", deploy_destination(node) if within == "deployments" else "", legacy)
        elif key in _VARIABLE_LISTS:
            yield from _walk(child, key, "", "", legacy)
        elif key == "deployments":
            yield from _walk(child, "deployments", "", "", legacy)
        elif within == "notifications":
            yield from _walk(child, "notifications", notification_field(key, bound), bound, legacy)
        elif key == "notifications":
            yield from _walk(child, _ENTRIES, notification_field(key, ""), "", legacy)
        else:
            yield from _walk(child, within, field, "", legacy)


def without_secrets(document: Any) -> Any:
    """A copy of a settings document with every secret's token taken out, for callers who may not change them."""
    shown = copy.deepcopy(document)
    for holder, key, _ in secret_fields(shown):
        if key == "secure":
            holder[key] = ""
        else:
            del holder[key]
    return shown


def _words(field: str) -> str:
    """A field as messages name it: ``variable/NAME`` is "variable NAME"."""
    return field.replace("/", " ", 1)


def _is_legacy(token: Any) -> bool:
    return isinstance(token, str) and token.startswith(LEGACY_TOKEN_PREFIX)


def protect_document(
    owner: Owner, document: Any, stored: Any, field: str = "settings", made: Mapping[str, str] | None = None
) -> None:
    """Encrypt, in place, every new plain secret of ``document``; ``stored`` is what it replaces, and ``made`` the
    tokens made for this request already (by token: its field), kept as stored ones are.

    Refused (``field`` names the request field) before any KMS call: a secure value that is not a string, a new
    one that KMS cannot encrypt (over MAX_SECRET_BYTES) or that the build log could not mask (under
    MIN_SECRET_CHARS, surrounding spaces aside; stored ones stay), a stored token sent back for another field
    than its own, any other token (one read before the secret was set again, or before its destination moved: it
    would still decrypt, and bring back a secret where it was not set), and more than MAX_NEW_SECRETS to look at.
    """
    _check_secure_destinations(document, field)
    kept: dict[str, set[str]] = {}
    for holder, key, where in secret_fields(stored):
        if isinstance(holder[key], str):
            kept.setdefault(holder[key], set()).add(where)
    for token, where in (made or {}).items():
        kept.setdefault(token, set()).add(where)
    found = list(secret_fields(document))
    for holder, key, where in found:
        value = holder[key]
        if not isinstance(value, str):
            raise Invalid("A secure value must be a string.")
        if value in kept:
            if where not in kept[value] and is_token(value):
                raise invalid(
                    field,
                    f"The token sent for {_words(where)} is the one of {_words(min(kept[value]))}: a secure value "
                    "works only where it was set. Send the plain value to set it here.",
                )
            continue
        if is_token(value):  # refused below, saying whose it is
            continue
        if len(value.strip()) < MIN_SECRET_CHARS:
            raise invalid(
                field,
                f"A secure value must be at least {MIN_SECRET_CHARS} characters long (surrounding spaces aside): "
                "the build log cannot mask a shorter one.",
            )
        if len(value.encode()) > MAX_SECRET_BYTES:
            raise invalid(
                field, f"A secure value must be {MIN_SECRET_CHARS} characters to {MAX_SECRET_BYTES} bytes long."
            )
    if sum(holder[key] not in kept for holder, key, _ in found) > MAX_NEW_SECRETS:
        raise invalid(field, f"At most {MAX_NEW_SECRETS} new secure values can be sent at once.")
    for holder, key, where in found:
        try:
            holder[key] = protect(owner, where, holder[key], kept)
        except Invalid as error:
            raise invalid(field, f"{error.message} Send the plain value to set it here.") from error
