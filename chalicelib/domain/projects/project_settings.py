"""A project's settings: the whole object, its YAML form, its environment variables, its build number.

Every write checks the caller's Update right, keeps stored secrets that come back as tokens, encrypts
new ones, and fails as a Conflict if the settings changed since they were read.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from chalicelib import outbound
from chalicelib.core.configuration import Configuration
from chalicelib.core.projects import Project, RoleRights
from chalicelib.core.repository_names import public_repository_name
from chalicelib.domain.configuration.crontab import with_schedule
from chalicelib.domain.configuration.yamlconfig import (
    DEFAULT_VERSION_FORMAT,
    default_configuration,
    from_yaml,
    is_per_branch,
    read_settings_yaml,
    to_yaml,
    written_configurations,
    written_secrets,
)
from chalicelib.domain.configuration.yamlconfig.notifications import provider_sent, read_back, refusal
from chalicelib.domain.forges.repositories import valid_repository
from chalicelib.domain.forges.repository_credentials import NO_CREDENTIALS, CredentialsChange, with_credentials
from chalicelib.domain.notifications.chat_notices import seal_secrets, webhook_refusal
from chalicelib.domain.projects.encrypted_settings import bound_encrypted_values
from chalicelib.domain.projects.project_lookup import find_project, find_project_by_id
from chalicelib.domain.shared.secrets import (
    HOW_TO_ENCRYPT,
    MAX_SECRET_BYTES,
    WEBHOOK_SECRET_FIELD,
    foreign_ciphertext,
    is_token,
    project_owner,
    protect,
    protect_document,
    secret_fields,
)
from chalicelib.domain.shared.validation import MAX_TEXT_LENGTH, invalid, too_long, valid_name
from chalicelib.domain.team.access import Right
from chalicelib.domain.team.auth import Caller
from chalicelib.errors import Invalid
from chalicelib.store import projects as store

MAX_BUILD_NUMBER = 2**31 - 1
# The stored configuration, secrets encrypted: the project's DynamoDB item and each build's (which adds the
# start request's variables and the commit) must stay within 400 KB.
MAX_CONFIGURATION_BYTES = 200_000


@dataclass(frozen=True)
class SettingsChange:
    """A settings PUT: which project (slug, else id), and every setting it sets (omitted: default)."""

    account_name: str | None
    slug: str | None
    project_id: int | None
    name: str | None
    repository_type: str | None
    repository_name: str | None
    repository_branch: str | None
    is_private: bool
    skip_branches_without_service_yml: bool
    ignore_service_yml: bool
    version_format: str | None
    next_build_number: int | None
    configuration: dict[str, Any] | None
    role_rights: RoleRights
    rolling_builds: bool = False
    webhook_secret: str | None = None  # None keeps the stored secret, "" removes it, a token keeps it, else a new one
    credentials: CredentialsChange = NO_CREDENTIALS  # the repository's clone credentials
    schedule_crontab_expression: str | None = None  # None keeps the stored schedule, "" removes it


def update_settings(caller: Caller, change: SettingsChange) -> None:
    """PUT /api/projects: replace the project's settings with the ones sent."""
    if change.slug:
        project = find_project(caller, change.account_name or caller.account_name, change.slug, Right.UPDATE)
    elif change.project_id is not None:
        project = find_project_by_id(caller, change.project_id, Right.UPDATE)
    else:
        raise invalid("slug", "Name the project with accountName and slug, or with projectId.")
    if change.project_id is not None and change.project_id != project.project_id:
        raise invalid("projectId", "projectId does not match the project the slug names.")
    configuration = _protected(project, valid_configuration(change.configuration), "configuration")
    repository_type = change.repository_type or project.repository_type
    repository_name, scm = project.repository_name, project.repository_scm
    # the name as responses show it is no change: a project stored with credentials in it keeps them until migrated
    sent_name = None if change.repository_name == public_repository_name(project) else change.repository_name
    if (repository_type, sent_name or repository_name) != (project.repository_type, repository_name):
        repository_name, scm = valid_repository(repository_type, sent_name or repository_name)
    after = replace(
        project,
        name=valid_name(change.name, "name") if change.name and change.name.strip() else project.name,
        repository_type=repository_type,
        repository_name=repository_name,
        repository_scm=scm,
        repository_branch=change.repository_branch or None,
        is_private=change.is_private,
        skip_branches_without_service_yml=change.skip_branches_without_service_yml,
        ignore_service_yml=change.ignore_service_yml,
        version_format=valid_version_format(change.version_format or DEFAULT_VERSION_FORMAT),
        next_build_number=project.next_build_number
        if change.next_build_number is None
        else valid_build_number(change.next_build_number),
        configuration=configuration,
        settings_yaml=None,  # the configuration sent replaces the YAML's, for every branch
        role_rights=change.role_rights,
        rolling_builds=change.rolling_builds,
        webhook_secret=_webhook_secret(project, change.webhook_secret),
    )
    after = with_schedule(after, change.schedule_crontab_expression, datetime.now(UTC))
    store.save_settings(project, with_credentials(after, change.credentials, before=project))


def _webhook_secret(project: Project, sent: str | None) -> str | None:
    """The webhook secret to store: encrypted like every secret, never kept in plain text."""
    if sent is None:
        return project.webhook_secret
    if not sent:
        return None
    if not is_token(sent) and len(sent.encode()) > MAX_SECRET_BYTES:
        raise invalid("webhookSecret", f"webhookSecret must be at most {MAX_SECRET_BYTES} bytes long.")
    kept = [project.webhook_secret] if project.webhook_secret else []
    try:
        return protect(project_owner(project), WEBHOOK_SECRET_FIELD, sent, kept)
    except Invalid as error:
        raise invalid("webhookSecret", f"{error.message} Send the plain value to set it.") from error


def settings_yaml(caller: Caller, account_name: str, slug: str) -> str:
    project = find_project(caller, account_name, slug)
    return project.settings_yaml or to_yaml(project.configuration, project.version_format)


def update_settings_yaml(caller: Caller, account_name: str, slug: str, text: str) -> None:
    """PUT .../settings/yaml: the YAML replaces the configuration (and the version format). It takes what
    appveyor.yml takes: one with for: items or a list of configurations is kept as written, and each build reads it
    for its branch, as a repository's appveyor.yml is read; the settings show its default branch's configuration."""
    project = find_project(caller, account_name, slug, Right.UPDATE)
    per_branch = is_per_branch(text)
    _check_no_foreign_ciphertext(text)
    made: dict[str, str] = {}  # the tokens of values of POST /api/account/encrypt, kept as written: their fields'
    if per_branch:
        _check_tokens_only(text)
        text, made = bound_encrypted_values(project_owner(project), text)
    configuration, version_format = read_settings_yaml(text, project.repository_branch or "")
    if per_branch:
        _check_stored_tokens(project, text, made)
    configuration = _protected(project, configuration, "configuration", made)
    after = replace(
        project,
        configuration=configuration,
        version_format=valid_version_format(version_format or DEFAULT_VERSION_FORMAT),
        settings_yaml=text if per_branch else None,
    )
    store.save_settings(project, after)


def _check_no_foreign_ciphertext(text: str) -> None:
    """A ``secure:`` value encrypted by another service (AppVeyor's) is refused, naming where it is: Conveyor cannot
    decrypt it, and taken for a plain value it would become the variable's value (a build would print it)."""
    for path, value in written_secrets(text):
        if foreign_ciphertext(value):
            raise invalid(
                "configuration",
                f"{path}: this secure value is not one Conveyor can decrypt (a value encrypted by AppVeyor, say, with "
                f"its account's key). {HOW_TO_ENCRYPT} Or set it as one of the project's environment variables "
                "(PUT .../settings/environment-variables takes the plain value and stores it encrypted).",
            )


def _check_tokens_only(text: str) -> None:
    """A settings YAML kept as written holds its secrets as this service's tokens, never in plain text (as a
    repository's appveyor.yml does): a plain one would be stored as it is."""
    for path, value in written_secrets(text):
        if not isinstance(value, str) or not is_token(value):
            raise invalid(
                "configuration",
                f"{path}: settings with for: items or a list of configurations are kept as written, so their "
                "secrets must be this service's tokens (secure: cvy2:..., as project settings show them), not "
                f"plain text; or set the value as one of the project's environment variables. {HOW_TO_ENCRYPT}",
            )


def _check_stored_tokens(project: Project, text: str, made: dict[str, str]) -> None:
    """A settings YAML kept as written takes, in each of its configurations and for: items, only a token stored at
    that same field now (or ``made`` for it by this request), as the settings JSON does: a token read before its
    secret was set again (or set for another field) would bring back, on the branches an item is for, a secret no
    longer set."""
    kept = _stored_tokens(project)
    for token, field in made.items():
        kept.setdefault(token, set()).add(field)
    for configuration in written_configurations(text):
        for holder, key, field in secret_fields(configuration):
            token = holder[key]
            if not isinstance(token, str) or token not in kept or (field and field not in kept[token]):
                raise invalid(
                    "configuration",
                    f"The token sent for {field.replace('/', ' ', 1) or 'a secure setting'} is not the one stored "
                    "there now: for: items and a list's configurations take only the tokens the project's settings "
                    "show for the same settings (a secret set again leaves its old token behind). Set another value "
                    "as a variable of its own.",
                )
    for path, token in written_secrets(text):  # those no configuration reads (a job item's filters, say)
        if token not in kept:
            raise invalid("configuration", f"{path}: the token is not one the project's settings hold now.")


def _stored_tokens(project: Project) -> dict[str, set[str]]:
    """The tokens the project's settings hold now, each with the fields it is stored at."""
    stored: list[Mapping[str, Any]] = [project.configuration]
    # one kept under older rules that no longer reads: its tokens are not the settings' any more
    with contextlib.suppress(Invalid):
        stored += written_configurations(project.settings_yaml) if project.settings_yaml else []
    kept: dict[str, set[str]] = {}
    for configuration in stored:
        for holder, key, field in secret_fields(configuration):
            if isinstance(holder[key], str):
                kept.setdefault(holder[key], set()).add(field)
    return kept


def environment_variables(caller: Caller, account_name: str, slug: str) -> list[dict[str, Any]]:
    return find_project(caller, account_name, slug).configuration["environmentVariables"]


def update_environment_variables(caller: Caller, account_name: str, slug: str, variables: Any) -> None:
    """PUT .../settings/environment-variables: the list replaces the project's variables."""
    project = find_project(caller, account_name, slug, Right.UPDATE)
    configuration = copy.deepcopy(project.configuration)
    configuration["environmentVariables"] = valid_named_values(variables, "environmentVariables")
    # the stored notifications are kept as they are: one saved before a provider was refused (HipChat, say) must
    # not make every change of variables a 400 (the build's messages name it)
    notifications = configuration.pop("notifications", [])
    configuration = _protected(project, valid_configuration(configuration), "environmentVariables")
    # the variables replace the settings YAML's for every branch: the settings are one configuration from now on
    after = replace(project, configuration={**configuration, "notifications": notifications}, settings_yaml=None)
    store.save_settings(project, after)


def set_next_build_number(caller: Caller, account_name: str, slug: str, number: int) -> None:
    project = find_project(caller, account_name, slug, Right.UPDATE)
    store.set_next_build_number(project, valid_build_number(number))


def valid_version_format(version_format: str) -> str:
    if len(version_format) > MAX_TEXT_LENGTH:
        raise too_long("versionFormat", MAX_TEXT_LENGTH)
    if "{build}" not in version_format:
        raise invalid("versionFormat", "Version format must contain {build} variable.")
    return version_format


def valid_build_number(number: int) -> int:
    if not 1 <= number <= MAX_BUILD_NUMBER:
        raise invalid("nextBuildNumber", f"nextBuildNumber must be between 1 and {MAX_BUILD_NUMBER}.")
    return number


def valid_named_values(values: Any, field: str) -> list[dict[str, Any]]:
    """A list of ``{name, value: {isEncrypted, value}}``, checked, names unique."""
    if not isinstance(values, list):
        raise invalid(field, f"{field} must be an array of {{name, value}} objects.")
    seen: set[str] = set()
    for entry in values:
        name = entry.get("name") if isinstance(entry, dict) else None
        value = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise invalid(field, f"Each of {field} needs a non-empty string name.")
        if len(name) > MAX_TEXT_LENGTH:
            raise invalid(field, f"{field}: a name must be at most {MAX_TEXT_LENGTH} characters long.")
        if not isinstance(value, dict) or not isinstance(value.get("isEncrypted", False), bool):
            raise invalid(field, f"{field} '{name}': value must be an object {{isEncrypted, value}}.")
        if value.get("value") is not None and not isinstance(value["value"], str):
            raise invalid(field, f"{field} '{name}': value.value must be a string.")
        if name in seen:
            raise invalid(field, f"{field} names '{name}' twice.")
        seen.add(name)
    return values


def _protected(
    project: Project, configuration: Configuration, field: str, made: dict[str, str] | None = None
) -> Configuration:
    """The configuration to store: its new notifications checked, new secrets encrypted, stored tokens (and those
    ``made`` for it) kept, and small enough to store."""
    _check_new_notifications(project, configuration, field)
    seal_secrets(configuration)
    protect_document(project_owner(project), configuration, project.configuration, field, made)
    size = len(json.dumps(configuration))
    if size > MAX_CONFIGURATION_BYTES:
        raise invalid(
            field,
            f"{field}: the configuration would be {size} bytes long as stored; "
            f"at most {MAX_CONFIGURATION_BYTES} bytes are allowed.",
        )
    return configuration


def _check_new_notifications(project: Project, configuration: Configuration, field: str) -> None:
    """Refuse a new or changed notifications entry of a provider Conveyor sends that it could not send as written
    (a misspelt Slack key, no webhook), or whose URL names a host it never connects to. One identical to a stored
    entry passes as it is (saved before such entries were refused, it is named in its builds' messages), so
    settings read and put back unchanged are taken. An entry of a provider Conveyor does not send at all (AppVeyor's
    GitHubPullRequest, HipChat) is taken with the rest, as appveyor.yml settings it does not honour are: each build
    names it among its messages ("Notification 2 (GitHubPullRequest) was not sent: ...")."""
    stored = [read_back(entry) for entry in project.configuration.get("notifications") or []]
    for index, notification in enumerate(configuration.get("notifications") or []):
        if notification in stored or not provider_sent(notification):
            continue
        if (refused := refusal(notification)) is not None:
            raise invalid(field, refused.at(f"notifications[{index}]"))
        url = (notification.get("settings") or {}).get("url")
        if isinstance(url, str) and (refused_url := outbound.url_refusal(url)):
            raise invalid(field, f"notifications: url: {refused_url}")
        if refused_webhook := webhook_refusal(notification):
            raise invalid(field, f"notifications: incoming_webhook: {refused_webhook}")


def valid_configuration(configuration: Any) -> Configuration:
    """A complete configuration: the defaults, overlaid with the fields sent, each of its default's type,
    in the canonical form its appveyor.yml gives back (so the YAML and JSON forms never disagree:
    an empty variable has no ``value``, ``branchesMode`` follows from the branch lists)."""
    if configuration is None:
        return default_configuration()
    complete: dict[str, Any] = dict(default_configuration())
    if not isinstance(configuration, dict):
        raise invalid("configuration", "configuration must be an object.")
    for name, value in configuration.items():
        if name not in complete:
            raise invalid("configuration", f"configuration.{name} is not a known setting.")
        default = complete[name]
        if default is not None and value is not None and type(value) is not type(default):
            raise invalid("configuration", f"configuration.{name} must be of type {type(default).__name__}.")
        complete[name] = value if value is not None else default
    try:
        canonical, _ = from_yaml(to_yaml(complete, None))
    except Invalid as error:
        raise invalid("configuration", f"configuration: {error.message}") from error
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise invalid("configuration", f"configuration has an element of the wrong shape ({error}).") from error
    return canonical
