"""A job's own settings: its build's configuration with the appveyor.yml ``for:`` items that select the job
(``matrix: only/except``) applied, as its runner and its variables see them; and the jobs those items skip.

A job notes the items that select it when its build is queued (``overrides`` in its spec: indexes into the build
configuration's ``jobOverrides``); a job stored before these items existed notes none and runs with its build's
configuration, as it always did. The rules of the merge are yamlconfig/for_items.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from chalicelib.core.configuration import Configuration, JobOverride
from chalicelib.domain.configuration import filters, packaging
from chalicelib.domain.configuration.matrix import MatrixJob
from chalicelib.domain.configuration.yamlconfig.for_items import JOB_ITEMS, merge_job_item
from chalicelib.errors import Invalid
from chalicelib.protocol.job_spec import RUNNER_SETTINGS, JobConfiguration

Json = dict[str, Any]


def _items(configuration: Configuration, spec: Json) -> list[JobOverride]:
    """The for: items that select the job, in the file's order."""
    items = configuration.get(JOB_ITEMS) or []
    return [items[index] for index in spec.get("overrides") or [] if 0 <= index < len(items)]


def job_configuration(configuration: Configuration, spec: Json) -> Configuration:
    """The configuration the job runs with: its build's, with each for: item that selects it merged in, in order."""
    for item in _items(configuration, spec):
        configuration = cast(Configuration, merge_job_item(configuration, item["fields"]))
    return configuration


def runner_settings(configuration: Configuration) -> JobConfiguration:
    """What a job's runner is told of its configuration: each setting a runner honours that it holds (one stored
    before the setting existed, the runner reads as protocol/job_spec.read_spec says), and no other: a deployment's
    or a notification's (secrets among them) stay with the service. Configuration types each alike."""
    held: Mapping[str, Any] = configuration
    return cast(JobConfiguration, {key: held[key] for key in RUNNER_SETTINGS if key in held})


def fetch_depth(configuration: Configuration) -> int | None:
    """How many commits a job's runner fetches: clone_depth, else 1 for shallow_clone; None for the whole history."""
    return configuration.get("cloneDepth") or (1 if configuration.get("shallowClone") else None)


def job_warnings(configuration: Configuration, spec: Json) -> list[str]:
    """What the job's log says first of its settings: those its for: items hold that apply to the whole build, not
    to one job, and build:'s packaging options a Windows job's MSBuild does not do (domain/configuration/
    packaging.py)."""
    ignored = [
        f"appveyor.yml {item['item']}: {', '.join(item['ignored'])} not applied to this job: an item with matrix "
        "only/except specialises jobs, and these settings are the whole build's (AppVeyor ignores them there too)."
        for item in _items(configuration, spec)
        if item.get("ignored")
    ]
    return ignored + packaging.log_notes(job_configuration(configuration, spec), spec)


def spec_fields(configuration: Configuration, spec: MatrixJob) -> Json:
    """What a new job's spec keeps of its build's configuration for itself: the for: items that select it, and
    max_jobs (what its dispatcher checks before it runs)."""
    fields: Json = {}
    if spec.overrides:
        fields["overrides"] = list(spec.overrides)
    if max_jobs := configuration.get("maxJobs"):
        fields["maxJobs"] = int(max_jobs)
    return fields


def unskipped(configuration: Configuration, specs: list[MatrixJob], pushed: filters.PushedCommit) -> list[MatrixJob]:
    """The jobs a webhook's build runs: those no for: item's filters (branches, skip_tags, skip_non_tags,
    skip_commits, only_commits) skip, numbered again; Invalid, saying why, when every job is skipped."""
    items = configuration.get(JOB_ITEMS) or []
    kept, reasons = [], []
    for spec in specs:
        reason = next(
            (
                f"{items[index]['item']}: {why}"
                for index in spec.overrides
                if items[index]["filters"] and (why := filters.skip_reason(items[index]["filters"], pushed))
            ),
            None,
        )
        if reason is None:
            kept.append(spec)
        else:
            reasons.append(f"job {spec.number} ({reason})")
    if not kept:
        raise Invalid(f"every job is skipped by its appveyor.yml for: item: {'; '.join(reasons)}")
    return [replace(spec, number=number) for number, spec in enumerate(kept, start=1)]


def with_job_notifications(configuration: Configuration, specs: list[MatrixJob]) -> Configuration:
    """The build's configuration with the notifications of the for: items that select any of its jobs joined to
    its own (AppVeyor merges them: a build notifies, not a job)."""
    items = configuration.get(JOB_ITEMS) or []
    chosen = sorted({index for spec in specs for index in spec.overrides})
    notifications = list(configuration.get("notifications") or [])
    for index in chosen:
        for notification in items[index]["fields"].get("notifications") or []:
            if notification not in notifications:
                notifications.append(notification)
    if notifications == (configuration.get("notifications") or []):
        return configuration
    return {**configuration, "notifications": notifications}
