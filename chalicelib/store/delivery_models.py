"""PynamoDB models of the tables of what surrounds builds: what a job reported, build agents, deployment
environments and deployments, and the outbox (store/models.py has the rest, and the reason they are apart)."""

from __future__ import annotations

from pynamodb.attributes import BooleanAttribute, JSONAttribute, NumberAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from chalicelib.store.models import TableName


class BuildAgentByKeyIndex(GlobalSecondaryIndex["BuildAgentModel"]):
    """A build agent by the hash of its key: how its requests are recognised."""

    class Meta:
        index_name = "by-key"
        projection = AllProjection()

    key_hash = UnicodeAttribute(hash_key=True)


class BuildAgentModel(Model):
    """A build agent of an account: the images whose jobs it takes, its key's hash, when it was last heard from."""

    class Meta:
        table_name = TableName("build-agents")

    account_id = NumberAttribute(hash_key=True)
    agent_id = NumberAttribute(range_key=True)
    name = UnicodeAttribute()
    images = JSONAttribute()  # the image names, as registered
    key_hash = UnicodeAttribute()
    created = UTCDateTimeAttribute()
    last_contact = UTCDateTimeAttribute(null=True)
    job_id = UnicodeAttribute(null=True)
    pull_requests = BooleanAttribute(default=False, null=True)
    by_key = BuildAgentByKeyIndex()


class JobReportModel(Model):
    """What a running job reported through the Build Worker API: a message, a compilation message or a test.

    ``report`` orders a job's reports and names tests: ``message#<ns>``, ``compilation#<ns>``,
    ``test#<sha256 of the name>`` (a test is updated by name), ``test#<sha256 of the name>#outside`` (the test as a
    key sent it from outside the build; before issue 43 it replaced the build's item, marked ``sentFromOutside``) or
    ``failedTest#<sha256 of the name>`` (the build reported the test failed). Removed with the job's build.
    """

    class Meta:
        table_name = TableName("job-reports")

    job_id = UnicodeAttribute(hash_key=True)
    report = UnicodeAttribute(range_key=True)
    body = JSONAttribute()
    created = UTCDateTimeAttribute()


class EnvironmentByAccessKeyIndex(GlobalSecondaryIndex["EnvironmentModel"]):
    """An environment by the hash of its access key: how a deployment agent is recognised."""

    class Meta:
        index_name = "by-access-key"
        projection = AllProjection()

    access_key_hash = UnicodeAttribute(hash_key=True)


class EnvironmentModel(Model):
    """A deployment environment of an account: a provider and its settings.

    The access key is kept encrypted (settings responses show it) and hashed (agents are found by it);
    ``revision`` guards updates against lost writes.
    """

    class Meta:
        table_name = TableName("environments")

    account_id = NumberAttribute(hash_key=True)
    environment_id = NumberAttribute(range_key=True)
    name = UnicodeAttribute()
    provider = UnicodeAttribute()
    access_key = UnicodeAttribute()  # a secrets token (KMS ciphertext)
    access_key_hash = UnicodeAttribute()
    settings = JSONAttribute()  # providerSettings, environmentVariables, notifications: secrets as tokens
    created = UTCDateTimeAttribute()
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default=1)
    by_access_key = EnvironmentByAccessKeyIndex()


class DeploymentByIdIndex(GlobalSecondaryIndex["DeploymentModel"]):
    """A deployment by its id alone."""

    class Meta:
        index_name = "by-id"
        projection = AllProjection()

    deployment_id = NumberAttribute(hash_key=True)


class DeploymentByEnvironmentIndex(GlobalSecondaryIndex["DeploymentModel"]):
    """An environment's deployments, newest first."""

    class Meta:
        index_name = "by-environment"
        projection = AllProjection()

    environment_id = NumberAttribute(hash_key=True)
    deployment_id = NumberAttribute(range_key=True)


class DeploymentModel(Model):
    """A deployment of a build to an environment, keyed by project so its history is one Query."""

    class Meta:
        table_name = TableName("deployments")

    project_id = NumberAttribute(hash_key=True)
    deployment_id = NumberAttribute(range_key=True)
    account_id = NumberAttribute()
    project_slug = UnicodeAttribute(null=True)  # slugs never change: a page's projects are read by key with the rest
    environment_id = NumberAttribute(null=True)  # absent on inline deployments: the by-environment index skips them
    environment = JSONAttribute()  # EnvironmentAtStart's fields: it may change or go later (store/deployments.py)
    inline = JSONAttribute(null=True)  # an inline deployment's deploy: entry {entry, provider}; absent otherwise
    build_id = NumberAttribute()
    build_job_id = UnicodeAttribute(null=True)
    variables = JSONAttribute(null=True)  # the start request's environmentVariables
    job_ids = JSONAttribute()
    status = UnicodeAttribute()
    created = UTCDateTimeAttribute()
    started = UTCDateTimeAttribute(null=True)
    finished = UTCDateTimeAttribute(null=True)
    updated = UTCDateTimeAttribute(null=True)
    revision = NumberAttribute(default=1)
    notified_revision = NumberAttribute(null=True)  # the finished revision its notifications went out for
    by_id = DeploymentByIdIndex()
    by_environment = DeploymentByEnvironmentIndex()


class OutboxModel(Model):
    """Queue messages owed: each written in the same transaction as the change it announces, and deleted once it is
    sent. What is still here a while later is sent again by the sweeper (the send after the write had failed)."""

    class Meta:
        table_name = TableName("outbox")

    owed = UnicodeAttribute(hash_key=True)  # "owed#0" to "owed#7", from the id: the outbox holds messages in flight
    message_id = UnicodeAttribute(range_key=True)  # "<epoch seconds, 10 digits>#<random>": the oldest first
    body = JSONAttribute()  # the message (core/messages.py), with its kind
