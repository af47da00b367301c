"""The Lambda executor: the runner function of the packaged template, invoked once per job with the ticket.

The function has a role of its own that grants nothing but its own logs, so a build holds no credential of
value; each invocation runs one job and then ends its execution environment (runner/aws_lambda.py), so nothing
a build leaves behind meets the next job.
"""

from __future__ import annotations

from chalicelib import aws
from chalicelib.protocol.ticket import Ticket


def start(ticket: Ticket, function_name: str) -> None:
    """Invoke the runner function asynchronously (Lambda queues the event; the job's lease covers the wait)."""
    aws.client("lambda").invoke(FunctionName=function_name, InvocationType="Event", Payload=ticket.to_json().encode())
