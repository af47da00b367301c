"""Wiring only: the Chalice app, its routes, its middleware, and its queue and schedule handlers.

Importing this module loads Chalice, the route table and the settings, and nothing a request or a message needs:
each route loads its view on its first call (chalicelib/api/routes.py), and each handler below its worker. Every
Lambda function of the app imports this module at its cold start (docs/architecture.md, "What a cold start loads").
"""

from chalice import Chalice, Cron, Rate
from chalice.app import CloudWatchEvent, SQSEvent

from chalicelib.api import routes
from chalicelib.api.http import error_bodies
from chalicelib.config import settings

app = Chalice(app_name="conveyor")
app.register_middleware(error_bodies, "http")
routes.register(app)

# Queue names are per stage; Chalice needs them when the handlers are declared.
JOBS_QUEUE = settings().jobs_queue
DEPLOYMENTS_QUEUE = settings().deployments_queue
NOTIFICATIONS_QUEUE = settings().notifications_queue


@app.on_sqs_message(queue=JOBS_QUEUE, batch_size=1)
def run_jobs(event: SQSEvent) -> None:
    from chalicelib.workers import jobs  # each handler loads its worker when it runs: cold start

    jobs.run_jobs(event)


@app.on_sqs_message(queue=f"{JOBS_QUEUE}-dlq", batch_size=1)
def abandon_jobs(event: SQSEvent) -> None:
    from chalicelib.workers import jobs

    jobs.abandon_jobs(event)


@app.on_sqs_message(queue=DEPLOYMENTS_QUEUE, batch_size=1)
def run_deployments(event: SQSEvent) -> None:
    from chalicelib.workers import deployments

    deployments.run_deployments(event)


@app.on_sqs_message(queue=f"{DEPLOYMENTS_QUEUE}-dlq", batch_size=1)
def abandon_deployments(event: SQSEvent) -> None:
    from chalicelib.workers import deployments

    deployments.abandon_deployments(event)


@app.on_sqs_message(queue=NOTIFICATIONS_QUEUE, batch_size=1)
def send_notifications(event: SQSEvent) -> None:
    from chalicelib.workers import notifications

    notifications.send_notifications(event)


@app.on_sqs_message(queue=f"{NOTIFICATIONS_QUEUE}-dlq", batch_size=1)
def abandon_notifications(event: SQSEvent) -> None:
    from chalicelib.workers import notifications

    notifications.abandon_notifications(event)


@app.schedule(Rate(1, unit=Rate.MINUTES))
def sweep_leases(event: CloudWatchEvent) -> None:
    from chalicelib.workers import jobs

    jobs.sweep_leases(event)


# At the start of each minute (a rate's ticks fall anywhere in it): a schedule's run starts within seconds.
@app.schedule(Cron("*", "*", "*", "*", "?", "*"))
def start_scheduled_builds(event: CloudWatchEvent) -> None:
    from chalicelib.workers import schedules

    schedules.start_scheduled_builds(event)
