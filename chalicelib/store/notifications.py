"""What notifications read and the marker that makes them go out once per finish of a build or deployment."""

from __future__ import annotations

from pynamodb.exceptions import UpdateError

from chalicelib.store.builds import Build, build_from_model
from chalicelib.store.deployments import Deployment, deployment_from_model
from chalicelib.store.models import BuildModel, DeploymentModel
from chalicelib.store.transactions import is_condition_failure

_FINISHED = ("success", "failed")  # what a build's status can have changed from (a cancel decides nothing)


def finished_build(project_id: int, build_id: int) -> Build | None:
    """The build as it is now (a consistent read: the message that names it was sent after its last write)."""
    try:
        return build_from_model(BuildModel.get(project_id, build_id, consistent_read=True))
    except BuildModel.DoesNotExist:
        return None


def finished_deployment(project_id: int, deployment_id: int) -> Deployment | None:
    """The deployment as it is now (a consistent read)."""
    try:
        return deployment_from_model(DeploymentModel.get(project_id, deployment_id, consistent_read=True))
    except DeploymentModel.DoesNotExist:
        return None


def previous_finished_build_on_branch(
    project_id: int, branch: str, before_build_id: int, limit: int = 20
) -> Build | None:
    """The newest build of ``branch`` older than ``before_build_id`` that succeeded or failed (within ``limit``)."""
    condition = BuildModel.build_id < before_build_id
    for model in BuildModel.by_branch.query(f"{project_id}#{branch}", condition, scan_index_forward=False, limit=limit):
        if model.status in _FINISHED:
            return build_from_model(model)
    return None


def claim_build_notifications(build: Build) -> bool:
    """Mark the build's notifications sent for its current revision; False if they were, or the build moved on."""
    return _claim(BuildModel(build.project_id, build.build_id), BuildModel, build.revision)


def claim_deployment_notifications(deployment: Deployment) -> bool:
    """Mark the deployment's notifications sent for its current revision; False if they were, or it moved on."""
    return _claim(
        DeploymentModel(deployment.project_id, deployment.deployment_id), DeploymentModel, deployment.revision
    )


def _claim(item: BuildModel | DeploymentModel, model: type[BuildModel] | type[DeploymentModel], revision: int) -> bool:
    not_yet = model.notified_revision.does_not_exist() | (model.notified_revision < revision)
    try:
        item.update(actions=[model.notified_revision.set(revision)], condition=(model.revision == revision) & not_yet)
    except UpdateError as error:
        if is_condition_failure(error):
            return False
        raise
    return True
