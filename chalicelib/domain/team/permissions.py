"""The permissions a role grants, and what the built-in roles grant.

The route table names each route's permission, so every function's cold start loads this module: the groups role
details show the permissions in are wire/roles.py's (docs/architecture.md, "What a cold start loads").
"""

from __future__ import annotations

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


ADMINISTRATOR = "Administrator"
USER = "User"

# What each built-in role grants: the administrator everything; a user reads everything and runs builds.
BUILT_IN_ROLES: dict[str, frozenset[Permission]] = {
    ADMINISTRATOR: frozenset(Permission),
    USER: frozenset({Permission.RUN_PROJECT_BUILD}),
}
