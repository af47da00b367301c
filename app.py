"""Wiring only: the Chalice app, its blueprints, its middleware, and its queue and schedule handlers."""

from chalice import Chalice, Cron, Rate
from chalice.app import CloudWatchEvent, SQSEvent

from chalicelib.api import (
    agents,
    badges,
    build_agents,
    builds,
    collaborators,
    dashboard,
    deployments,
    environments,
    health,
    openapi,
    projects,
    roles,
    runner,
    sessions,
    users,
    webhooks,
)
from chalicelib.api.http import error_bodies
from chalicelib.config import settings
from chalicelib.workers import deployments as deployment_workers
from chalicelib.workers import jobs, schedules
from chalicelib.workers import notifications as notification_workers

app = Chalice(app_name="conveyor")
app.register_middleware(error_bodies, "http")
app.register_blueprint(health.blueprint)
app.register_blueprint(openapi.blueprint)
app.register_blueprint(agents.blueprint)
app.register_blueprint(build_agents.blueprint)
app.register_blueprint(runner.blueprint)
app.register_blueprint(webhooks.blueprint)
app.register_blueprint(badges.blueprint)
app.register_blueprint(sessions.blueprint)
app.register_blueprint(dashboard.blueprint)
for resource in (users, collaborators, roles, projects, builds, environments, deployments, sessions, build_agents):
    app.register_blueprint(resource.api.blueprint)

# Queue names are per stage; Chalice needs them when the handlers are declared.
JOBS_QUEUE = settings().jobs_queue
DEPLOYMENTS_QUEUE = settings().deployments_queue
NOTIFICATIONS_QUEUE = settings().notifications_queue


@app.on_sqs_message(queue=JOBS_QUEUE, batch_size=1)
def run_jobs(event: SQSEvent) -> None:
    jobs.run_jobs(event)


@app.on_sqs_message(queue=f"{JOBS_QUEUE}-dlq", batch_size=1)
def abandon_jobs(event: SQSEvent) -> None:
    jobs.abandon_jobs(event)


@app.on_sqs_message(queue=DEPLOYMENTS_QUEUE, batch_size=1)
def run_deployments(event: SQSEvent) -> None:
    deployment_workers.run_deployments(event)


@app.on_sqs_message(queue=f"{DEPLOYMENTS_QUEUE}-dlq", batch_size=1)
def abandon_deployments(event: SQSEvent) -> None:
    deployment_workers.abandon_deployments(event)


@app.on_sqs_message(queue=NOTIFICATIONS_QUEUE, batch_size=1)
def send_notifications(event: SQSEvent) -> None:
    notification_workers.send_notifications(event)


@app.on_sqs_message(queue=f"{NOTIFICATIONS_QUEUE}-dlq", batch_size=1)
def abandon_notifications(event: SQSEvent) -> None:
    notification_workers.abandon_notifications(event)


@app.schedule(Rate(1, unit=Rate.MINUTES))
def sweep_leases(event: CloudWatchEvent) -> None:
    jobs.sweep_leases(event)


# At the start of each minute (a rate's ticks fall anywhere in it): a schedule's run starts within seconds.
@app.schedule(Cron("*", "*", "*", "*", "?", "*"))
def start_scheduled_builds(event: CloudWatchEvent) -> None:
    schedules.start_scheduled_builds(event)
