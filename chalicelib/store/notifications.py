"""The marker that makes notifications go out once per finish of a build or deployment."""

from __future__ import annotations

from pynamodb.exceptions import UpdateError

from chalicelib.core.builds import Build
from chalicelib.core.deployments import Deployment
from chalicelib.store.delivery_models import DeploymentModel
from chalicelib.store.models import BuildModel
from chalicelib.store.transactions import is_condition_failure


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
