"""A project: a repository, its settings and appveyor.yml configuration, and its rights per role."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.core.builds import BuildSummary
from chalicelib.core.configuration import Configuration
from chalicelib.core.reprs import FieldsRepr

RoleRights = dict[int, dict[str, bool]]  # role id -> access right -> allowed (absent: as the role says)


@dataclass(frozen=True, repr=False)
class Project(FieldsRepr):
    """A project of an account: its repository, settings and configuration, its newest build, its schedule."""

    account_id: int
    account_name: str
    project_id: int
    slug: str
    name: str
    repository_type: str
    repository_scm: str
    repository_name: str
    webhook_id: str
    version_format: str
    configuration: Configuration
    created: datetime
    repository_branch: str | None = None
    is_private: bool = True  # a project is public (readable without a key) only when it was made so
    skip_branches_without_service_yml: bool = False
    ignore_service_yml: bool = False
    next_build_number: int = 1
    role_rights: RoleRights = field(default_factory=dict)
    last_build: BuildSummary | None = None  # its newest build, for the project list and badges
    updated: datetime | None = None
    revision: int = 1
    badge_id: str | None = None  # projects from before status badges have none until first asked
    webhook_secret: str | None = None  # a secrets token
    rolling_builds: bool = False
    repository_authentication: str | None = None  # "credentials" (username and password), else None
    repository_username: str | None = None
    repository_password: str | None = None  # a secrets token, never shown
    ssh_public_key: str | None = None  # the deploy key's public half, shown
    ssh_private_key: str | None = None  # a secrets token, never shown
    ssh_host_key: str | None = None  # the SSH server's host key, as the first fetch saw it
    schedule_crontab_expression: str | None = None  # AppVeyor's scheduleCrontabExpression: NCrontab's fields, UTC
    schedule_next_run: datetime | None = None  # when the schedule is due next (set with the expression)
    schedule_last_error: str | None = None  # why the last scheduled build did not start; None once one did
    # the settings YAML as PUT, kept when it holds what one configuration cannot (for: items, a list of
    # configurations): builds read it as they read a repository's appveyor.yml, for their branch
    settings_yaml: str | None = None
