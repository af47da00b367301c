"""A project's job slots under max_jobs: one counters item per project holding the ids of the jobs that hold a
slot and of the queued jobs that wait for one. Taking a slot is one conditional write, so of two dispatchers
racing for the last slot one wins."""

from __future__ import annotations

from dataclasses import dataclass

from pynamodb.exceptions import UpdateError
from pynamodb.expressions.condition import size
from pynamodb.expressions.update import Action

from chalicelib.store.models import CounterModel
from chalicelib.store.transactions import condition_held, is_condition_failure

# Waiters one item holds: their ids stay well under DynamoDB's 400 KB an item (some 20,000 would pass it).
MAX_WAITERS = 5000


@dataclass(frozen=True)
class Slots:
    holders: frozenset[str]  # jobs given a slot (running, or about to be)
    waiters: frozenset[str]  # queued jobs that found none free


def _key(project_id: int) -> str:
    return f"job-slots#{project_id}"


def slots(project_id: int) -> Slots:
    """The project's slot holders and waiters, read consistently."""
    try:
        item = CounterModel.get(_key(project_id), consistent_read=True)
    except CounterModel.DoesNotExist:
        return Slots(frozenset(), frozenset())
    return Slots(frozenset(item.holders or ()), frozenset(item.waiters or ()))


def take_slot(project_id: int, job_id: str, limit: int) -> bool:
    """Give the job a slot if fewer than ``limit`` are held (or it holds one already); it waits no more. False
    (nothing written) when every slot is held."""
    room = (
        CounterModel.holders.does_not_exist()
        | (size(CounterModel.holders) < limit)
        | CounterModel.holders.contains(job_id)
    )
    return condition_held(
        lambda: CounterModel(_key(project_id)).update(
            actions=[CounterModel.holders.add({job_id}), CounterModel.waiters.delete({job_id})], condition=room
        )
    )


def wait_for_slot(project_id: int, job_id: str) -> bool:
    """Note a queued job that found no slot free, so that a job that ends wakes it; False (nothing written) when
    MAX_WAITERS wait already: that job is woken by its message's resend, or its hold-back's end, instead."""
    room = CounterModel.waiters.does_not_exist() | (size(CounterModel.waiters) < MAX_WAITERS)
    return condition_held(
        lambda: CounterModel(_key(project_id)).update(actions=[CounterModel.waiters.add({job_id})], condition=room)
    )


def forget(project_id: int) -> None:
    """Drop the project's slots and waiters: the project is deleted."""
    CounterModel(_key(project_id)).delete()


def release(project_id: int, holders: set[str], waiters: set[str] | None = None) -> None:
    """Take slots from jobs that no longer run, and forget waiters that no longer wait (the item must exist)."""
    actions: list[Action] = []
    if holders:
        actions.append(CounterModel.holders.delete(holders))
    if waiters:
        actions.append(CounterModel.waiters.delete(waiters))
    if not actions:
        return
    try:
        CounterModel(_key(project_id)).update(actions=actions, condition=CounterModel.name.exists())
    except UpdateError as error:
        if not is_condition_failure(error):
            raise
