"""Project settings' shapes: GET .../settings, and the bodies that add a project or change its settings."""

from __future__ import annotations

from typing import Any

from chalicelib.core.projects import Project, RoleRights
from chalicelib.core.roles import Role
from chalicelib.domain.forges.repositories import MAX_REPOSITORY_NAME_LENGTH
from chalicelib.domain.forges.repository_credentials import CredentialsChange
from chalicelib.domain.projects.project_settings import MAX_BUILD_NUMBER, SettingsChange
from chalicelib.domain.shared.validation import MAX_NAME_LENGTH, MAX_TEXT_LENGTH, invalid
from chalicelib.domain.team.access import Right
from chalicelib.scm import forges
from chalicelib.scm.forges import by_url
from chalicelib.shapes.time import timestamp
from chalicelib.wire.fields import Fields
from chalicelib.wire.projects import project_json

IMAGES = [{"name": "Ubuntu"}]  # the one image this runner provides: Linux, scripts run with /bin/sh


def settings_json(project: Project, roles: list[Role], base_url: str, may_update: bool) -> dict[str, Any]:
    """GET .../settings: the project, its full settings, and the build images on offer; the webhook's id, URL and
    secret's token only to callers who may update the project (without a secret, the URL alone starts builds: a
    member denied RunBuild must not read it), empty strings to anyone else."""
    # a forge with no webhook of its own (Azure Repos, Bitbucket Server, Kiln) is sent the generic git hook's
    route = forges.of(project.repository_type).webhook or by_url.GIT.webhook
    webhook_url = f"{base_url}/api/{route}/webhook?id={project.webhook_id}"
    settings = {
        **project_json(project, roles),
        "versionFormat": project.version_format,
        "nextBuildNumber": project.next_build_number,
        "webhookId": project.webhook_id if may_update else "",
        "webhookUrl": webhook_url if may_update else "",
        "ignoreServiceYml": project.ignore_service_yml,
        "rollingBuilds": project.rolling_builds,
        "configuration": project.configuration,
        "scheduleCrontabExpression": project.schedule_crontab_expression,
    }
    if project.schedule_crontab_expression and project.schedule_next_run:
        settings["scheduleNextRun"] = timestamp(project.schedule_next_run)
    if project.schedule_last_error:
        settings["scheduleLastError"] = project.schedule_last_error
    if may_update:
        settings["webhookSecret"] = project.webhook_secret  # a token (or null): sending it back keeps the secret
    if project.badge_id:  # the view gives one to projects from before badges
        settings["statusBadgeId"] = project.badge_id
    return {"project": project_json(project, roles), "settings": settings, "images": IMAGES}


def parse_role_rights(body: Any, roles: list[Role]) -> RoleRights:
    """The per-role restrictions of a securityDescriptor sent in a settings PUT."""
    if body is None or body == {}:
        return {}
    descriptor = Fields(body, "securityDescriptor")
    by_id = {role.role_id: role for role in roles}
    role_rights: RoleRights = {}
    for ace_body in descriptor.array("roleAces"):
        ace = Fields(ace_body, "Each of securityDescriptor.roleAces")
        role_id = ace.identifier("roleId")
        role = by_id.get(role_id)
        if role is None:
            raise invalid("securityDescriptor", f"securityDescriptor names role {role_id}, not a role of this account.")
        is_admin = role.is_system and role.name == "Administrator"
        rights: dict[str, bool] = {}
        for right_body in ace.array("accessRights") if "accessRights" in ace.body else []:
            entry = Fields(right_body, "Each of accessRights")
            name = entry.text("name")
            if name not in {right.value for right in Right}:
                raise invalid("securityDescriptor", f"Unknown access right '{name}'.")
            if entry.body.get("allowed") is None:
                continue
            allowed = entry.boolean("allowed")
            if is_admin and not allowed:
                raise invalid("securityDescriptor", "The Administrator role always has every right.")
            if not is_admin:
                rights[name] = allowed
        if rights:
            role_rights[role.role_id] = rights
    return role_rights


def parse_credentials(fields: Fields) -> CredentialsChange:
    """repositoryAuthentication (null removes the credentials), repositoryUsername, repositoryPassword: each
    absent keeps what is stored."""
    authentication: str | None = None
    if "repositoryAuthentication" in fields.body:
        authentication = fields.optional_text("repositoryAuthentication") or ""
    return CredentialsChange(
        authentication=authentication,
        username=fields.optional_text("repositoryUsername", MAX_TEXT_LENGTH),
        password=fields.optional_text("repositoryPassword", 8 * 1024),
    )


def parse_settings_change(body: Any, roles: list[Role]) -> SettingsChange:
    """The body of PUT /api/projects: the settings object as GET .../settings returns it."""
    fields = Fields(body)
    configuration = fields.body.get("configuration")
    if configuration is not None and not isinstance(configuration, dict):
        raise invalid("configuration", "configuration must be an object.")
    return SettingsChange(
        account_name=fields.optional_text("accountName"),
        slug=fields.optional_text("slug"),
        project_id=fields.identifier("projectId") if fields.body.get("projectId") is not None else None,
        name=fields.optional_text("name", MAX_NAME_LENGTH),
        repository_type=fields.optional_text("repositoryType"),
        repository_name=fields.optional_text("repositoryName", MAX_REPOSITORY_NAME_LENGTH),
        repository_branch=fields.optional_text("repositoryBranch"),
        is_private=fields.boolean("isPrivate", default=True),  # public only when it says so
        skip_branches_without_service_yml=fields.boolean("skipBranchesWithoutServiceYml"),
        ignore_service_yml=fields.boolean("ignoreServiceYml"),
        version_format=fields.optional_text("versionFormat"),
        next_build_number=fields.integer("nextBuildNumber", 1, MAX_BUILD_NUMBER)
        if fields.body.get("nextBuildNumber") is not None
        else None,
        configuration=configuration,
        role_rights=parse_role_rights(fields.body.get("securityDescriptor"), roles),
        rolling_builds=fields.boolean("rollingBuilds"),
        credentials=parse_credentials(fields),
        webhook_secret=fields.optional_text("webhookSecret", 8 * 1024),  # a token of a 4 KB secret fits
        schedule_crontab_expression=parse_schedule(fields),
    )


def parse_schedule(fields: Fields) -> str | None:
    """scheduleCrontabExpression: absent keeps the stored schedule (a body from before the field keeps it), null
    or an empty string removes it."""
    if "scheduleCrontabExpression" not in fields.body:
        return None
    return fields.optional_text("scheduleCrontabExpression") or ""
