"""The permissions a role grants, in the groups role details show them in."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Permission(StrEnum):
    MANAGE_PROJECTS = "ManageProjects"
    UPDATE_PROJECT_SETTINGS = "UpdateProjectSettings"
    RUN_PROJECT_BUILD = "RunProjectBuild"
    DELETE_PROJECT_BUILDS = "DeleteProjectBuilds"
    MANAGE_ENVIRONMENTS = "ManageEnvironments"
    UPDATE_ENVIRONMENT_SETTINGS = "UpdateEnvironmentSettings"
    DEPLOY_TO_ENVIRONMENT = "DeployToEnvironment"
    UPDATE_ACCOUNT_DETAILS = "UpdateAccountDetails"
    ADD_USER = "AddUser"
    UPDATE_USER_DETAILS = "UpdateUserDetails"
    DELETE_USER = "DeleteUser"
    ADD_ROLE = "AddRole"
    UPDATE_ROLE_DETAILS = "UpdateRoleDetails"
    DELETE_ROLE = "DeleteRole"
    CONFIGURE_API_KEYS = "ConfigureApiKeys"


@dataclass(frozen=True)
class PermissionGroup:
    name: str
    permissions: tuple[tuple[Permission, str], ...]  # (permission, description)


GROUPS: tuple[PermissionGroup, ...] = (
    PermissionGroup(
        "Projects",
        (
            (Permission.MANAGE_PROJECTS, "Add and delete projects"),
            (Permission.UPDATE_PROJECT_SETTINGS, "Update project settings"),
            (Permission.RUN_PROJECT_BUILD, "Run, re-run and cancel project builds"),
            (Permission.DELETE_PROJECT_BUILDS, "Delete project builds"),
        ),
    ),
    PermissionGroup(
        "Environments",
        (
            (Permission.MANAGE_ENVIRONMENTS, "Add and delete deployment environments"),
            (Permission.UPDATE_ENVIRONMENT_SETTINGS, "Update deployment environment settings"),
            (Permission.DEPLOY_TO_ENVIRONMENT, "Deploy builds to environments"),
        ),
    ),
    PermissionGroup("Account", ((Permission.UPDATE_ACCOUNT_DETAILS, "Update account details"),)),
    PermissionGroup(
        "Users",
        (
            (Permission.ADD_USER, "Add users and collaborators"),
            (Permission.UPDATE_USER_DETAILS, "Update users and collaborators"),
            (Permission.DELETE_USER, "Delete users and collaborators"),
        ),
    ),
    PermissionGroup(
        "Roles",
        (
            (Permission.ADD_ROLE, "Add roles"),
            (Permission.UPDATE_ROLE_DETAILS, "Update roles"),
            (Permission.DELETE_ROLE, "Delete roles"),
        ),
    ),
    PermissionGroup("User", ((Permission.CONFIGURE_API_KEYS, "Generate API keys"),)),
)

ADMINISTRATOR = "Administrator"
USER = "User"

# What each built-in role grants: the administrator everything; a user reads everything and runs builds.
BUILT_IN_ROLES: dict[str, frozenset[Permission]] = {
    ADMINISTRATOR: frozenset(Permission),
    USER: frozenset({Permission.RUN_PROJECT_BUILD}),
}
