"""Build agents, keyed by (account_id, agent_id), also found by their key's hash."""

from __future__ import annotations

from datetime import UTC, datetime

from pynamodb.exceptions import UpdateError
from pynamodb.expressions.update import Action

from chalicelib.core.build_agents import BuildAgent
from chalicelib.store.delivery_models import BuildAgentModel
from chalicelib.store.transactions import condition_held, is_condition_failure


def _agent(model: BuildAgentModel) -> BuildAgent:
    return BuildAgent(
        account_id=int(model.account_id),
        agent_id=int(model.agent_id),
        name=model.name,
        images=[str(image) for image in model.images or []],
        key_hash=model.key_hash,
        created=model.created,
        last_contact=model.last_contact,
        job_id=model.job_id,
        pull_requests=bool(model.pull_requests),
    )


def add_agent(agent: BuildAgent) -> None:
    """Store a newly registered agent (its id is new: nothing is overwritten)."""
    BuildAgentModel(
        agent.account_id,
        agent.agent_id,
        name=agent.name,
        images=agent.images,
        key_hash=agent.key_hash,
        created=agent.created,
        pull_requests=agent.pull_requests,
    ).save(condition=BuildAgentModel.agent_id.does_not_exist())


def list_agents(account_id: int) -> list[BuildAgent]:
    """The account's build agents, in registration order."""
    return [_agent(model) for model in BuildAgentModel.query(account_id)]


def get_agent_by_key_hash(key_hash: str) -> BuildAgent | None:
    """The one agent whose key has that hash, or None; read again from the table, consistently: the index may
    still hold an agent deleted a moment ago."""
    found = list(BuildAgentModel.by_key.query(key_hash, limit=2))
    if len(found) != 1:
        return None
    try:
        return _agent(BuildAgentModel.get(found[0].account_id, found[0].agent_id, consistent_read=True))
    except BuildAgentModel.DoesNotExist:
        return None


def note_contact(agent: BuildAgent, job_id: str | None = None) -> None:
    """The agent was heard from now (and, with ``job_id``, took that job); nothing when it was deleted meanwhile."""
    actions: list[Action] = [BuildAgentModel.last_contact.set(datetime.now(UTC))]
    if job_id is not None:
        actions.append(BuildAgentModel.job_id.set(job_id))
    try:
        BuildAgentModel(agent.account_id, agent.agent_id).update(
            actions=actions, condition=BuildAgentModel.agent_id.exists()
        )
    except UpdateError as error:
        if not is_condition_failure(error):
            raise


def delete_agent(account_id: int, agent_id: int) -> bool:
    """Remove the agent (its key stops working at once); False when there was none."""
    return condition_held(
        lambda: BuildAgentModel(account_id, agent_id).delete(condition=BuildAgentModel.agent_id.exists())
    )
