"""The forges' registry: every forge implements the one interface, is listed once, and what it says it does (a
webhook, commit statuses) it implements. No IO."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from chalicelib.core.webhooks import WEBHOOK_PROVIDERS
from chalicelib.errors import Invalid
from chalicelib.scm import forges
from chalicelib.scm.forge import CommitStatus, Forge
from chalicelib.scm.forges import azure_repos, bitbucket, bitbucket_server, by_url, gitea, github, gitlab, kiln


def test_every_forge_module_is_registered_and_every_registered_forge_is_a_forge() -> None:
    modules = [
        importlib.import_module(f"{forges.__name__}.{info.name}") for info in pkgutil.iter_modules(forges.__path__)
    ]
    declared = {value for module in modules for value in vars(module).values() if isinstance(value, Forge)}

    assert {azure_repos, bitbucket, bitbucket_server, by_url, gitea, github, gitlab, kiln} <= set(modules)
    assert declared == set(forges.FORGES)  # a forge's module declares it, and its line lists it
    assert all(isinstance(forge, Forge) for forge in forges.FORGES)


def test_each_repository_provider_and_webhook_names_one_forge() -> None:
    types = [forge.repository_type for forge in forges.FORGES]

    assert len(types) == len(set(types)) and forges.repository_types() == tuple(types)
    assert set(forges.webhooks()) == set(WEBHOOK_PROVIDERS)  # the routes (core/webhooks.py) are the forges' hooks
    assert all(forges.named(name) is forges.of(name) for name in types)
    assert forges.named("perforce") is None


@pytest.mark.parametrize("forge", [forge for forge in forges.FORGES if forge.webhook], ids=lambda forge: forge.name)
def test_a_forge_with_a_webhook_reads_its_deliveries(forge: Forge) -> None:
    assert type(forge).hook_event is not Forge.hook_event
    assert forges.hooked(str(forge.webhook)) is forge


@pytest.mark.parametrize(
    "forge", [forge for forge in forges.FORGES if forge.takes_statuses], ids=lambda forge: forge.name
)
def test_a_forge_that_takes_statuses_words_them(forge: Forge) -> None:
    status = CommitStatus("success", "a" * 40, "continuous-integration/conveyor/branch", "ok", None, "main", 1)

    url, body = forge.status_request("https://forge.example/api", "octo/app", status)

    assert url.startswith("https://forge.example/api/") and body
    assert forges.with_statuses(forge.repository_type) is forge


def test_a_forge_without_a_webhook_or_statuses_says_so_rather_than_guessing() -> None:
    with pytest.raises(NotImplementedError):
        kiln.KILN.hook_event({}, {})
    assert forges.with_statuses("kiln") is None and forges.with_statuses("perforce") is None


@pytest.mark.parametrize(
    ("repository_type", "head", "merge"),
    [
        ("gitHub", "refs/pull/7/head", "refs/pull/7/merge"),
        ("gitea", "refs/pull/7/head", "refs/pull/7/merge"),
        ("git", "refs/pull/7/head", "refs/pull/7/merge"),
        ("gitLab", "refs/merge-requests/7/head", "refs/merge-requests/7/merge"),
        ("stash", "refs/pull-requests/7/from", "refs/pull-requests/7/merge"),
        ("vso", "refs/pull/7/head", None),
    ],
)
def test_a_pull_requests_refs_are_where_its_forge_keeps_them(
    repository_type: str, head: str, merge: str | None
) -> None:
    assert forges.of(repository_type).pull_refs(7) == (head, merge)


def test_bitbucket_cloud_keeps_no_pull_request_refs() -> None:
    with pytest.raises(Invalid, match="build the pull request's branch"):
        forges.of("bitBucket").pull_refs(7)


def test_an_azure_repos_repository_is_cloned_from_its_projects_git_path() -> None:
    assert forges.of("vso").clone_url("org/proj") == "https://dev.azure.com/org/proj/_git/proj"
    assert not forges.of("vso").deploy_keys
