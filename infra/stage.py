"""A stage as the deployed functions see it: their settings, and the functions Chalice makes of the app."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from chalice.app import Chalice, SQSEventConfig
from chalice.cli.factory import CLIFactory
from chalice.config import Config
from chalice.constants import DEFAULT_LAMBDA_TIMEOUT
from chalice.utils import to_cfn_resource_name

from chalicelib.config import Settings, settings

API_HANDLER = "api_handler"  # every route is served by this one function, which Chalice's template calls APIHandler


@dataclass(frozen=True)
class Function:
    """One Lambda function of the app."""

    name: str  # the handler's name in app.py: run_jobs
    logical_id: str  # its resource in Chalice's template: RunJobs
    function_name: str  # its name in Lambda: conveyor-prod-run_jobs
    timeout: int  # seconds, as .chalice/config.json sets it for the stage
    queue: str | None  # the SQS queue it consumes, if it is an SQS handler


@dataclass(frozen=True)
class Stage:
    """What the template of one stage is made from."""

    name: str
    app_name: str
    settings: Settings
    functions: tuple[Function, ...]
    custom_domain: dict[str, Any] | None  # api_gateway_custom_domain of the stage's config, if any
    endpoint_type: str  # api_gateway_endpoint_type: EDGE or REGIONAL
    api_stage: str  # api_gateway_stage: the API's URL ends in /<api_stage>

    def consumer_of(self, queue: str) -> Function | None:
        """The function whose SQS event source is ``queue``."""
        return next((function for function in self.functions if function.queue == queue), None)


def load_stage(project_dir: str, stage: str) -> Stage:
    """Load the app as ``chalice package`` does: with the stage's environment variables set in this process."""
    for name in [name for name in os.environ if name.startswith("CONVEYOR_")]:
        del os.environ[name]  # the functions see the stage's variables only, and so must the template
    factory = CLIFactory(project_dir, environ=os.environ)  # as Chalice's CLI makes it: loading the app sets them
    config = factory.create_config_obj(stage)
    app = config.chalice_app
    return Stage(
        name=stage,
        app_name=config.app_name,
        settings=settings(),
        functions=_functions(app, config, stage),
        custom_domain=config.api_gateway_custom_domain,
        endpoint_type=config.api_gateway_endpoint_type,
        api_stage=config.api_gateway_stage,
    )


def _functions(app: Chalice, config: Config, stage: str) -> tuple[Function, ...]:
    handlers: list[tuple[str, str, str | None]] = []
    if app.routes:
        handlers.append((API_HANDLER, "APIHandler", None))
    for source in app.event_sources:  # SQS handlers and schedules
        queue = source.queue if isinstance(source, SQSEventConfig) else None
        handlers.append((source.name, to_cfn_resource_name(source.name), queue))
    handlers.extend(
        (function.name, to_cfn_resource_name(function.name), None) for function in app.pure_lambda_functions
    )
    return tuple(
        Function(
            name=name,
            logical_id=logical_id,
            function_name=f"{config.app_name}-{stage}-{name}",  # what `chalice deploy` would name it
            timeout=config.scope(stage, name).lambda_timeout or DEFAULT_LAMBDA_TIMEOUT,
            queue=queue,
        )
        for name, logical_id, queue in handlers
    )
