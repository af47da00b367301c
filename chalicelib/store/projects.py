"""Projects, keyed by (account_id, slug), also found by id; settings change under a revision check."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from pynamodb.exceptions import UpdateError
from pynamodb.expressions.condition import Condition

from chalicelib.core.builds import BuildSummary
from chalicelib.core.projects import Project, RoleRights
from chalicelib.errors import Conflict, NotFound
from chalicelib.store import schedules
from chalicelib.store.models import ProjectModel
from chalicelib.store.transactions import condition_held, is_condition_failure, rewrite_unchanged

log = logging.getLogger(__name__)
REPOSITORY_BADGE_PROVIDERS = frozenset({"github", "bitbucket"})  # lower-cased: /api/projects/status/{provider}/...


def project_from_model(model: ProjectModel) -> Project:
    return Project(
        account_id=int(model.account_id),
        account_name=model.account_name,
        project_id=int(model.project_id),
        slug=model.slug,
        name=model.name,
        repository_type=model.repository_type,
        repository_scm=model.repository_scm,
        repository_name=model.repository_name,
        repository_branch=model.repository_branch,
        is_private=not model.public,  # items from before `public` are private (see ProjectModel.public)
        skip_branches_without_service_yml=bool(model.skip_branches_without_service_yml),
        ignore_service_yml=bool(model.ignore_service_yml),
        version_format=model.version_format,
        next_build_number=int(model.next_build_number),
        webhook_id=model.webhook_id,
        configuration=model.configuration,
        role_rights={int(role_id): rights for role_id, rights in (model.role_rights or {}).items()},
        last_build=summary_from_item(model.last_build),
        created=model.created,
        updated=model.updated,
        revision=int(model.revision),
        badge_id=model.badge_id,
        webhook_secret=model.webhook_secret,
        rolling_builds=bool(model.rolling_builds),
        repository_authentication=model.repository_authentication,
        repository_username=model.repository_username,
        repository_password=model.repository_password,
        ssh_public_key=model.ssh_public_key,
        ssh_private_key=model.ssh_private_key,
        ssh_host_key=model.ssh_host_key,
        schedule_crontab_expression=model.schedule_expression,
        schedule_next_run=schedules.from_epoch(model.schedule_due),
        schedule_last_error=model.schedule_error,
        settings_yaml=model.settings_yaml,
    )


def public_repository_key(provider: str, repository_name: str) -> str:
    """The by-public-repository key of a repository: ``github:owner/repo``, lower-cased (names are not
    case-sensitive on GitHub or Bitbucket)."""
    return f"{provider}:{repository_name}".lower()


def _public_repository(project: Project) -> str | None:
    """The project's by-public-repository key: only a public project's, of a repository AppVeyor's repository
    badge can name (GitHub, Bitbucket)."""
    if project.is_private or project.repository_type.lower() not in REPOSITORY_BADGE_PROVIDERS:
        return None
    return public_repository_key(project.repository_type, project.repository_name)


def _rights_json(role_rights: RoleRights) -> dict[str, dict[str, bool]] | None:
    return {str(role_id): rights for role_id, rights in role_rights.items() if rights} or None


def get_project(account_id: int, slug: str) -> Project | None:
    """The account's project with that slug, or None."""
    if not slug:  # DynamoDB refuses an empty key rather than finding nothing
        return None
    try:
        return project_from_model(ProjectModel.get(account_id, slug))
    except ProjectModel.DoesNotExist:
        return None


def get_project_by_id(account_id: int, project_id: int) -> Project | None:
    """The account's project with that id, or None (another account's project is None too)."""
    for model in ProjectModel.by_id.query(project_id):
        if int(model.account_id) == account_id:
            return project_from_model(model)
    return None


def get_project_by_webhook_id(webhook_id: str) -> Project | None:
    """The project whose webhook URL carries ``webhook_id``, or None."""
    if not webhook_id:
        return None
    for model in ProjectModel.by_webhook.query(webhook_id, limit=1):
        return project_from_model(model)
    return None


def list_projects(account_id: int) -> list[Project]:
    """Every project of the account, by slug."""
    return [project_from_model(model) for model in ProjectModel.query(account_id)]


def scan_projects() -> Iterator[Project]:
    """Every project of every account: a Scan, for migrations only (never on a request's path)."""
    for model in ProjectModel.scan():
        yield project_from_model(model)


def rewrite_old_build_summaries() -> int:
    """Projects whose last-build summary is still the API's JSON of the build: rewritten in the store's own form
    (unless a newer build is shown meanwhile); how many. A Scan, for migrations only."""

    def rewrite(model: ProjectModel) -> tuple[list[Any], Condition] | None:
        summary = summary_from_item(model.last_build) if is_old_summary(model.last_build) else None
        if summary is None:
            return None
        # only while the summary read is the one stored: a newer one is never overwritten
        unchanged = (ProjectModel.last_build_id == model.last_build_id) & (ProjectModel.last_build == model.last_build)
        return [ProjectModel.last_build.set(summary_item(summary))], unchanged

    return rewrite_unchanged(ProjectModel.scan(ProjectModel.last_build.exists()), rewrite)


def slug_taken(account_id: int, slug: str) -> bool:
    return ProjectModel.count(account_id, ProjectModel.slug == slug, limit=1) > 0


def add_project(project: Project) -> bool:
    """Store a new project; False (and nothing written) when its slug is taken meanwhile."""
    model = ProjectModel(
        project.account_id,
        project.slug,
        project_id=project.project_id,
        account_name=project.account_name,
        name=project.name,
        repository_type=project.repository_type,
        repository_scm=project.repository_scm,
        repository_name=project.repository_name,
        repository_branch=project.repository_branch,
        is_private=project.is_private,
        public=None if project.is_private else True,
        public_repository=_public_repository(project),
        version_format=project.version_format,
        next_build_number=project.next_build_number,
        webhook_id=project.webhook_id,
        configuration=project.configuration,
        created=project.created,
        revision=1,
        badge_id=project.badge_id,
        repository_authentication=project.repository_authentication,
        repository_username=project.repository_username,
        repository_password=project.repository_password,
        ssh_public_key=project.ssh_public_key,
        ssh_private_key=project.ssh_private_key,
        ssh_host_key=project.ssh_host_key,
    )
    return condition_held(lambda: model.save(condition=ProjectModel.slug.does_not_exist()))


def save_settings(before: Project, after: Project) -> None:
    """Write the settings of ``after``; Conflict if the project changed since ``before`` was read."""
    actions = [
        ProjectModel.name.set(after.name),
        ProjectModel.repository_type.set(after.repository_type),
        ProjectModel.repository_scm.set(after.repository_scm),
        ProjectModel.repository_name.set(after.repository_name),
        ProjectModel.is_private.set(after.is_private),
        ProjectModel.public.remove() if after.is_private else ProjectModel.public.set(True),
        ProjectModel.skip_branches_without_service_yml.set(after.skip_branches_without_service_yml),
        ProjectModel.ignore_service_yml.set(after.ignore_service_yml),
        ProjectModel.rolling_builds.set(after.rolling_builds),
        ProjectModel.webhook_secret.set(after.webhook_secret)
        if after.webhook_secret
        else ProjectModel.webhook_secret.remove(),
        ProjectModel.version_format.set(after.version_format),
        ProjectModel.configuration.set(after.configuration),
        ProjectModel.updated.set(datetime.now(UTC)),
        ProjectModel.revision.add(1),
        ProjectModel.repository_branch.set(after.repository_branch)
        if after.repository_branch
        else ProjectModel.repository_branch.remove(),
    ]
    for attribute, value in (
        (ProjectModel.repository_authentication, after.repository_authentication),
        (ProjectModel.repository_username, after.repository_username),
        (ProjectModel.repository_password, after.repository_password),
        (ProjectModel.ssh_public_key, after.ssh_public_key),
        (ProjectModel.ssh_private_key, after.ssh_private_key),
        (ProjectModel.ssh_host_key, after.ssh_host_key),
        (ProjectModel.public_repository, _public_repository(after)),
        (ProjectModel.settings_yaml, after.settings_yaml),
    ):
        actions.append(attribute.set(value) if value else attribute.remove())
    rights = _rights_json(after.role_rights)
    actions.append(ProjectModel.role_rights.set(rights) if rights else ProjectModel.role_rights.remove())
    if after.next_build_number != before.next_build_number:
        actions.append(ProjectModel.next_build_number.set(after.next_build_number))
    # written only when it changes: the scheduler moves the next run on without a revision, and an unchanged
    # schedule written back would make a run it already started due again
    if (after.schedule_crontab_expression, after.schedule_next_run) != (
        before.schedule_crontab_expression,
        before.schedule_next_run,
    ):
        actions.extend(schedules.schedule_actions(after))
    _update(before, actions, ProjectModel.revision == before.revision)


def note_ssh_host_key(project: Project, host_key: str) -> None:
    """Keep the host key the project's first SSH fetch saw; a key noted meanwhile stays (the first one wins)."""
    try:
        ProjectModel(project.account_id, project.slug).update(
            actions=[ProjectModel.ssh_host_key.set(host_key)],
            condition=ProjectModel.slug.exists() & ProjectModel.ssh_host_key.does_not_exist(),
        )
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def set_next_build_number(project: Project, number: int) -> None:
    """Make ``number`` the number the next build of the project gets."""
    _update(
        project,
        [ProjectModel.next_build_number.set(number), ProjectModel.updated.set(datetime.now(UTC))],
        ProjectModel.slug.exists(),
    )


def delete_project(project: Project) -> None:
    """Remove the project's item (what lies under it in S3 is removed by the caller)."""
    ProjectModel(project.account_id, project.slug).delete()


def _update(project: Project, actions: list[Any], condition: Any) -> None:
    try:
        ProjectModel(project.account_id, project.slug).update(actions=actions, condition=condition)
    except UpdateError as error:
        if not is_condition_failure(error):
            raise
        if get_project(project.account_id, project.slug) is None:
            raise NotFound("Project not found or access denied.") from error
        raise Conflict("The project's settings changed meanwhile; read them again and retry.") from error


# A project keeps its newest build's summary (ProjectModel.last_build) in the store's own form: snake_case fields,
# ISO 8601 times, "form": 2. Items written before kept the API's JSON of the build instead (camelCase, "buildId"):
# they are read as they are, and `conveyor migrate` rewrites them.
_SUMMARY_FORM = 2
_SUMMARY_TIMES = ("created", "started", "finished", "updated")


def summary_item(summary: BuildSummary) -> dict[str, Any]:
    item: dict[str, Any] = {name: getattr(summary, name) for name in BuildSummary.__dataclass_fields__}
    for name in _SUMMARY_TIMES:
        item[name] = None if item[name] is None else item[name].isoformat()
    return {**item, "form": _SUMMARY_FORM}


def summary_from_item(item: dict[str, Any] | None) -> BuildSummary | None:
    if not item:
        return None
    if item.get("form") != _SUMMARY_FORM:
        try:
            return _summary_from_api_json(item)
        except (KeyError, TypeError, ValueError):  # a shape no version wrote: the project shows no last build
            log.error("a project's last build summary cannot be read: %.200s", item)
            return None
    fields: dict[str, Any] = {name: item[name] for name in BuildSummary.__dataclass_fields__ if name in item}
    for name in _SUMMARY_TIMES:
        fields[name] = None if fields.get(name) is None else datetime.fromisoformat(fields[name])
    fields["messages"] = fields.get("messages") or []
    return BuildSummary(**fields)


def is_old_summary(item: dict[str, Any] | None) -> bool:
    """Whether a project's last_build is in the form items had before the store kept its own."""
    return bool(item and item.get("form") != _SUMMARY_FORM)


def _summary_from_api_json(shown: dict[str, Any]) -> BuildSummary:
    """A summary kept as the API showed the build (before the store kept its own form): the same build back."""

    def moment(name: str) -> datetime | None:
        return datetime.fromisoformat(shown[name]) if shown.get(name) else None

    commit = {
        "message": shown.get("message", ""),
        "commitId": shown.get("commitId", ""),
        "authorName": shown.get("authorName", ""),
        "authorEmail": shown.get("authorUsername", ""),
        "committerName": shown.get("committerName", ""),
        "committerEmail": shown.get("committerUsername", ""),
    }
    if shown.get("committed"):
        commit["committed"] = shown["committed"]
    if shown.get("messageExtended"):
        commit["messageExtended"] = shown["messageExtended"]
    branch = str(shown.get("branch", ""))
    pull_request = None
    if shown.get("pullRequestId") is not None:
        pull_request = {"pullRequestId": shown["pullRequestId"], "pullRequestName": shown.get("pullRequestName", "")}
    return BuildSummary(
        build_id=int(shown["buildId"]),
        project_id=int(shown["projectId"]),
        build_number=int(shown["buildNumber"]),
        version=str(shown["version"]),
        branch=branch,
        ref=f"refs/tags/{shown['tag']}" if shown.get("isTag") and shown.get("tag") else f"refs/heads/{branch}",
        commit=commit,
        status=str(shown["status"]),
        created=moment("created") or datetime.now(UTC),
        pull_request=pull_request,
        messages=list(shown.get("messages") or []),
        started=moment("started"),
        finished=moment("finished"),
        updated=moment("updated"),
    )
