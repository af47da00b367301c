"""Notification secrets stored before they were bound to where their entry sends: re-encrypted by the migration.

Until the third review of issue 34 a notifications entry's secure settings were bound to their key alone
(``notification/KEY``): a token moved into another entry, aimed at another receiver, still decrypted. They are now
bound to the entry's provider and receiver too (``notify/destinations.py``). ``conveyor migrate``
re-encrypts so the tokens stored in projects' settings (their configuration, and their settings YAML kept as
written) and in environments' settings, each for the entry it is stored in; the tokens of ``cvy1:`` (bound to the
account alone) with them. A repository's appveyor.yml is no stored data: an entry there whose token was copied
before is not sent, and its build says why (copy the token the project's settings show now).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from chalicelib.core.environments import Environment
from chalicelib.core.projects import Project
from chalicelib.domain.configuration.yamlconfig import written_configurations
from chalicelib.domain.shared import secrets
from chalicelib.errors import Invalid

Renewed = dict[tuple[str, str], str]  # (a token bound the old way, the field it is bound to now) -> its new token


def rebound_project(project: Project) -> Project | None:
    """The project with its notification secrets bound to where their entries send; None when none needs it."""
    owner = secrets.project_owner(project)
    renewed: Renewed = {}  # a token of the configuration and of the YAML it was read from stays one token
    configuration = copy.deepcopy(project.configuration)
    changed = rebound(owner, configuration, renewed)
    text = _rebound_text(owner, project.settings_yaml, renewed) if project.settings_yaml else project.settings_yaml
    if not changed and text == project.settings_yaml:
        return None
    return replace(project, configuration=configuration, settings_yaml=text)


def rebound_environment(environment: Environment) -> dict[str, Any] | None:
    """The environment's settings with their notifications' secrets bound to where each entry sends; None when
    none needs it."""
    settings = copy.deepcopy(environment.settings)
    return settings if rebound(secrets.environment_owner(environment), settings, {}) else None


def rebound(owner: secrets.Owner, document: Any, renewed: Renewed) -> bool:
    """Re-encrypt, in place, the notification secrets of ``document`` bound the old way, each bound to where its
    entry sends; whether any was."""
    changed = False
    for holder, key, field, before in secrets.notification_secrets(document):
        token = _renewed(owner, holder[key], field, before, renewed)
        if token is not None:
            holder[key] = token
            changed = True
    return changed


def _rebound_text(owner: secrets.Owner, text: str, renewed: Renewed) -> str:
    """Settings YAML kept as written with its notification tokens bound the old way replaced, each where it is
    written (one written in two entries sending to different receivers stays: neither can have it alone)."""
    try:
        configurations = written_configurations(text)
    except Invalid:  # kept under older rules: its builds say what is wrong with it
        return text
    replacements: dict[str, set[str]] = {}
    for configuration in configurations:
        for holder, key, field, before in secrets.notification_secrets(configuration):
            token = _renewed(owner, holder[key], field, before, renewed)
            if token is not None:
                replacements.setdefault(holder[key], set()).add(token)
    for old, (new, *others) in replacements.items():
        if not others:
            text = text.replace(old, new)
    return text


def _renewed(owner: secrets.Owner, token: Any, field: str, before: str, renewed: Renewed) -> str | None:
    """The token of ``token``'s secret bound to ``field``, when it is bound the old way (to ``before``, or a
    ``cvy1:`` one to the account); None when it needs no change or is not the owner's (it stays as it is)."""
    if not isinstance(token, str) or not secrets.is_token(token) or field == before:
        return None
    if (token, field) in renewed:
        return renewed[(token, field)]
    if token.startswith(secrets.TOKEN_PREFIX):
        try:
            secrets.decrypt(owner, field, token)
            return None  # bound already
        except Invalid:
            pass
    try:  # a cvy1: token is accepted at the field it is stored at (``field``, as its entry is written) alone
        plain = secrets.decrypt(owner, field if token.startswith(secrets.LEGACY_TOKEN_PREFIX) else before, token)
    except Invalid:
        return None  # another owner's or field's: it stays, and the entry is not sent, saying why
    renewed[(token, field)] = secrets.encrypt(owner, field, plain)
    return renewed[(token, field)]
