"""The permission matrix: every endpoint the app serves, called by every kind of caller, answers as designed.

The callers, all calling into one account (``home``):
  admin         its owner's key: the Administrator role
  user          a member with the built-in User role (reads everything, runs builds)
  nothing       a member with a custom role that allows nothing (still reads: viewing needs no permission)
  collaborator  the owner of a third account, collaborating in ``home`` with a role allowing COLLABORATOR_GRANTS,
                calling with their user-level ``v2.`` key under ``/api/account/{home}``
  other         the owner of a second account with its own account-level key: ``home``'s resources named by id
                or slug are not found; lists and additions act on its own account
  anonymous     no key at all
and, on every route, one of the callers whose Authorization header carries no key the service accepts (UNACCEPTED:
another scheme, no scheme, an empty bearer, a key of no one), taking turns route by route, each answered as a
caller without a key is: the anonymous column. (Every request is authenticated in one place before it is routed,
so each route needs one of them, and each of them a dozen routes, not all six on every route.)

Every route the app also serves under ``/api/account/{home}`` is called there too, by the callers the prefix
changes anything for (another account's key, no key, an unknown key, an unknown v2 key) and, for lists, by the owner.

The shared project is private, as every project is unless made public, so the anonymous column is what a private
project answers; what a public project's reads answer without a key, and that nothing else does, is
test_public_projects.py's.

Every request is one the Administrator's succeeds with, so permission is the only reason for a refusal, and a
refusal must leave ``home`` as it was. Rows that would destroy what other rows read get a throwaway target per
caller.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.api.http import ACCOUNT_PREFIX
from chalicelib.domain.team.permissions import Permission
from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.deployments import add_environment
from tests.gitserver import GitServer
from tests.support import Account, Caller, Reply, add_project, member_of_role, new_account, unique

CALLERS = ("admin", "user", "nothing", "collaborator", "other", "anonymous")
# What the Authorization header of callers without an accepted key says, made of the owner's key where it has one.
UNACCEPTED: dict[str, Callable[[str], str]] = {
    "basic scheme": lambda key: f"Basic {key}",
    "token scheme": lambda key: f"Token {key}",
    "bare key": lambda key: key,
    "empty bearer": lambda key: "Bearer ",
    "unknown key": lambda key: "Bearer not-a-key-of-anyone",
    "unknown v2 key": lambda key: "Bearer v2.not-a-key-of-anyone",
}
# Who calls the routes under home's prefix as well. A known account-level key of another account is not found
# there and a v2 key needs the prefix to name its account, so keys of no one are called there too; a header that
# names no bearer key at all is refused before the prefix is read (chalicelib/domain/team/auth.py), as the plain route
# shows.
UNDER_PREFIX = ("other", "anonymous", "unknown key", "unknown v2 key")
UNAUTHORIZED = {"message": "Authorization required"}  # a runner's job token is refused saying what is wrong with it
COLLABORATOR_GRANTS = {"UpdateProjectSettings", "DeployToEnvironment", "AddRole"}
# routes served at /api only
UNPREFIXED = (
    "/health",
    "/openapi.json",
    "/agent/",
    "/runner/",
    "/projects/status/",
    "/github/",
    "/gitea/",
    "/gitlab/",
    "/bitbucket/",
    "/git/",
    "/session",
)

# The status each caller gets. A cell marked "!" is the designed status where the service answers otherwise: its
# test is an expected failure, for the reason DISCREPANCIES gives.
# Another account's POST /users and /collaborators name home's role in the body: an unknown roleId is a bad field.
# Agents authenticate with an environment's access key, build agents with their own key, which no API key is; health
# and the API document take none.
# Runners authenticate with the job token minted for their one job, which no API key is either.
# A badge's id and a webhook's id are their own credentials: whatever key comes with them, the answer is the same.
# Signing in takes an e-mail address and password (a home user's, whoever sends them), signing out a session cookie
# (none here): neither takes a key, so a key changes nothing.
MATRIX = """
endpoint                                                           admin user nothing collaborator other anonymous
# users
GET    /users                                                       200   200  200     200          200   401
GET    /users/{userId}                                              200   200  200     200          404   401
GET    /users/{userId} (a role id)                                  200   200  200     200          404   401
POST   /users                                                       204   403  403     403          400   401
PUT    /users                                                       204   403  403     403          404   401
DELETE /users/{userId}                                              204   403  403     403          404   401
# collaborators
GET    /collaborators                                               200   200  200     200          200   401
GET    /collaborators/{userId}                                      200   200  200     200          404   401
POST   /collaborators                                               204   403  403     403          400   401
PUT    /collaborators                                               204   403  403     403          404   401
DELETE /collaborators/{userId}                                      204   403  403     403          404   401
# roles
GET    /roles                                                       200   200  200     200          200   401
GET    /roles/{roleId}                                              200   200  200     200          404   401
POST   /roles                                                       200   403  403     200          200   401
PUT    /roles                                                       200   403  403     403          404   401
DELETE /roles/{roleId}                                              204   403  403     403          404   401
# environments
GET    /environments                                                200   200  200     200          200   401
GET    /environments/{deploymentEnvironmentId}/settings             200   200  200     200          404   401
GET    /environments/{deploymentEnvironmentId}/deployments          200   200  200     200          404   401
POST   /environments                                                200   403  403     403          200   401
PUT    /environments                                                200   403  403     403          404   401
DELETE /environments/{deploymentEnvironmentId}                      204   403  403     403          404   401
# build agents
GET    /build-agents                                                200   200  200     200          200   401
POST   /build-agents                                                200   403  403     403          200   401
DELETE /build-agents/{agentId}                                      204   403  403     403          404   401
# deployments
GET    /deployments/{deploymentId}                                  200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/deployments            200   200  200     200          404   401
POST   /deployments                                                 200   403  403     200          404   401
PUT    /deployments/stop                                            204   403  403     204          404   401
# projects and their settings
GET    /projects                                                    200   200  200     200          200   401
POST   /projects                                                    200   403  403     403          200   401
PUT    /projects                                                    204   403  403     204          404   401
DELETE /projects/{accountName}/{projectSlug}                        204   403  403     403          404   401
GET    /projects/{accountName}/{projectSlug}/settings               200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/settings/yaml          200   200  200     200          404   401
PUT    /projects/{accountName}/{projectSlug}/settings/yaml          204   403  403     204          404   401
GET    /projects/{accountName}/{projectSlug}/settings/environment-variables 200 200 200 200       404   401
PUT    /projects/{accountName}/{projectSlug}/settings/environment-variables 204 403 403 204       404   401
PUT    /projects/{accountName}/{projectSlug}/settings/build-number  204   403  403     204          404   401
DELETE /projects/{accountName}/{projectSlug}/buildcache             204   403  403     204          404   401
# builds and their jobs
GET    /projects/{accountName}/{projectSlug}                        200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/branch/{buildBranch}   200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/build/{buildVersion}   200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/history                200   200  200     200          404   401
POST   /builds                                                      200   200  403     403          404   401
PUT    /builds                                                      200   200  403     403          404   401
DELETE /builds/{accountName}/{projectSlug}/{buildVersion}           204   204  403     403          404   401
DELETE /builds/{buildId}                                            204   403  403     403          404   401
GET    /buildjobs/{jobId}/log                                       200   200  200     200          404   401
GET    /buildjobs/{jobId}/artifacts                                 200   200  200     200          404   401
GET    /buildjobs/{jobId}/messages                                  200   200  200     200          404   401
GET    /buildjobs/{jobId}/tests                                     200   200  200     200          404   401
GET    /buildjobs/{jobId}/artifacts/{part1}                         302   302  302     302          404   401
GET    /buildjobs/{jobId}/artifacts/{part1}/{part2}                 302   302  302     302          404   401
GET    /buildjobs/{jobId}/artifacts/{part1}/{part2}/{part3}         302   302  302     302          404   401
GET    /buildjobs/{jobId}/artifacts/{part1}/{part2}/{part3}/{part4} 302   302  302     302          404   401
GET    /projects/{accountName}/{projectSlug}/artifacts/{part1} 302 302 302 302 404 401
GET    /projects/{accountName}/{projectSlug}/artifacts/{part1}/{part2} 302 302 302 302 404 401
GET    /projects/{accountName}/{projectSlug}/artifacts/{part1}/{part2}/{part3} 302 302 302 302 404 401
GET    /projects/{accountName}/{projectSlug}/artifacts/{part1}/{part2}/{part3}/{part4} 302 302 302 302 404 401
# who a key or the dashboard's session cookie acts for
GET    /caller                                                      200   200  200     200          200   401
# served at /api only
GET    /health                                                      200   200  200     200          200   200
GET    /openapi.json                                                200   200  200     200          200   200
POST   /agent/jobs/next                                             401   401  401     401          401   401
POST   /agent/jobs/{jobId}/heartbeat                                401   401  401     401          401   401
POST   /agent/jobs/{jobId}/log                                      401   401  401     401          401   401
POST   /agent/jobs/{jobId}/result                                   401   401  401     401          401   401
POST   /agent/builds/next                                           401   401  401     401          401   401
POST   /agent/builds/busy                                           401   401  401     401          401   401
GET    /runner/jobs/{jobId}                                         401   401  401     401          401   401
GET    /runner/jobs/{jobId}/runner                                  401   401  401     401          401   401
POST   /runner/jobs/{jobId}/clone-credentials                       401   401  401     401          401   401
POST   /runner/jobs/{jobId}/heartbeat                               401   401  401     401          401   401
PUT    /runner/jobs/{jobId}/log/{index}                             401   401  401     401          401   401
POST   /runner/jobs/{jobId}/artifacts                               401   401  401     401          401   401
POST   /runner/jobs/{jobId}/cache/entries                           401   401  401     401          401   401
POST   /runner/jobs/{jobId}/cache/uploads                           401   401  401     401          401   401
POST   /runner/jobs/{jobId}/cache/prune                             401   401  401     401          401   401
POST   /runner/jobs/{jobId}/messages                                401   401  401     401          401   401
POST   /runner/jobs/{jobId}/tests                                   401   401  401     401          401   401
PUT    /runner/jobs/{jobId}/tests                                   401   401  401     401          401   401
PUT    /runner/jobs/{jobId}/build                                   401   401  401     401          401   401
POST   /runner/jobs/{jobId}/finish                                  401   401  401     401          401   401
GET    /runner/jobs/{jobId}/id-token                                401   401  401     401          401   401
GET    /projects/status/{badgeId}                                   200   200  200     200          200   200
GET    /projects/status/{badgeId}/branch/{buildBranch}              200   200  200     200          200   200
GET    /projects/status/{badgeId}/{repositoryOwner}/{repositoryName} 200  200  200     200          200   200
POST   /github/webhook                                              200   200  200     200          200   200
POST   /gitea/webhook                                               200   200  200     200          200   200
POST   /gitlab/webhook                                              200   200  200     200          200   200
POST   /bitbucket/webhook                                           200   200  200     200          200   200
POST   /git/webhook                                                 200   200  200     200          200   200
POST   /session                                                     204   204  204     204          204   204
DELETE /session                                                     204   204  204     204          204   204
# test results files (issue 38): a job token, or a key that may run the project's builds, while the job runs (the
# world's job has ended: 409 for who may)
POST   /testresults/{resultsFormat}/{jobId}                         409   409  403     403          404   401
# a project's tests and quarantine (issue 38): read as the project is; the quarantine changed as its settings are
GET    /projects/{accountName}/{projectSlug}/tests                  200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/tests/{testId}/history 200   200  200     200          404   401
GET    /projects/{accountName}/{projectSlug}/tests/quarantine       200   200  200     200          404   401
PUT    /projects/{accountName}/{projectSlug}/tests/quarantine       200   403  403     200          404   401
DELETE /projects/{accountName}/{projectSlug}/tests/quarantine       200   403  403     200          404   401
DELETE /projects/{accountName}/{projectSlug}/tests/quarantine/{testId} 200 403 403   200          404   401
POST   /runner/jobs/{jobId}/quarantine                              401   401  401     401          401   401
# a value encrypted for secure: (issue 43): any member, bound to the project named, which the caller must see
POST   /account/encrypt                                             200   200  200     200          404   401
"""

# "<endpoint> as <caller>" -> why the service's answer differs from the designed one in MATRIX, and where.
DISCREPANCIES: dict[str, str] = {}

# One artifact per route depth of GET /buildjobs/{jobId}/artifacts/{part1}/.../{partN} (and of the permalink's).
ARTIFACT_FILES = ("a1.txt", "d1/a2.txt", "d1/d2/a3.txt", "d1/d2/d3/a4.txt")
BUILD_YML = appveyor_yml(
    "build_script:",
    "  - mkdir -p d1/d2/d3 && " + " && ".join(f"echo {path} > {path}" for path in ARTIFACT_FILES),
    "artifacts:",
    *(f"  - path: {path}" for path in ARTIFACT_FILES),
)
Params = dict[str, Any]


@dataclass
class World:
    """The accounts, callers and resources the rows work with; ``params`` fill the routes' path parameters."""

    home: Account
    callers: dict[str, Caller]
    project: BuildProject
    environment: dict[str, Any]
    build: dict[str, Any]
    user_role_id: int
    bystanders: dict[str, Any] = field(default_factory=dict)  # what update rows set to what it already is
    params: Params = field(default_factory=dict)
    home_names: tuple[str, ...] = ()  # what another account's answers must never mention

    def read(self, path: str) -> Any:
        """What home's Administrator reads at ``path``: the JSON, or the text when it is plain text."""
        reply = self.home.api.get(path)
        assert reply.status == 200, (path, reply.body)
        return reply.body.decode() if reply.headers.get("Content-Type", "").startswith("text/") else reply.json

    def status_of(self, path: str) -> int:
        return self.home.api.get(path).status


@pytest.fixture(scope="module")
def world(client: Client, git_server: GitServer, pump: SqsPump) -> World:
    home, other, collaborators_home = new_account(client), new_account(client), new_account(client)
    home.add_role("Nothing allowed")
    collaborator_role = home.add_role("Collaborators", COLLABORATOR_GRANTS)
    invited = home.api.post(
        "/collaborators", {"email": collaborators_home.owner_email, "roleId": collaborator_role["roleId"]}
    )
    assert invited.status == 204, invited.body
    collaborator_key = collaborators_home.caller_for(collaborators_home.owner_email, user_level=True).key
    callers = {
        "admin": home.api,
        "user": member_of_role(home, "User"),
        "nothing": member_of_role(home, "Nothing allowed"),
        "collaborator": Caller(client, collaborator_key, f"/api/account/{home.name}"),
        "other": other.api,
        "anonymous": Caller(client, None),
        **{name: Caller(client, None, authorization=header(home.key)) for name, header in UNACCEPTED.items()},
    }
    project = BuildProject(home, git_server, {"appveyor.yml": BUILD_YML})
    build = project.run()
    assert build["status"] == "success", build
    environment = add_environment(home, "Agent", {"agents_timeout": "60"})  # its deployments stay queued
    world = World(home, callers, project, environment, build, home.role_id("User"))
    bystander_role = home.add_role("Bystanders", {"RunProjectBuild"})
    world.bystanders = {
        "user": home.add_user(f"{unique('bystander')}@team.example"),
        "collaborator": _new_collaborator(world),
        "role": world.read(f"/roles/{bystander_role['roleId']}"),
    }
    collaborator = next(
        entry for entry in world.read("/collaborators") if entry["email"] == collaborators_home.owner_email
    )
    settings = world.read(project.path + "/settings")["settings"]
    public = home.api.post(
        "/projects", {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('public')}", "isPrivate": False}
    ).json
    world.params = {
        "accountName": home.name,
        "projectSlug": project.project["slug"],
        "buildVersion": build["version"],
        "buildBranch": build["branch"],
        "buildId": build["buildId"],
        "jobId": build["jobs"][0]["jobId"],
        "userId": world.bystanders["user"]["userId"],
        "collaboratorId": collaborator["userId"],
        "roleId": home.role_id("Nothing allowed"),
        "deploymentEnvironmentId": environment["deploymentEnvironmentId"],
        "deploymentId": _new_deployment(world)["deploymentId"],
        "agentId": _new_build_agent(world)["agentId"],
        "badgeId": settings["statusBadgeId"],
        "webhookId": settings["webhookId"],
        # a public GitHub project of home's (the shared one is private): its repository badge
        "repositoryOwner": public["repositoryName"].split("/")[0],
        "repositoryName": public["repositoryName"].split("/")[1],
    }
    world.home_names = (home.name, project.project["slug"], environment["name"], world.bystanders["user"]["email"])
    return world


# Throwaway targets and request bodies, made when a row's test runs.


def _new_collaborator(world: World) -> dict[str, Any]:
    email = f"{unique('collaborator')}@elsewhere.example"
    reply = world.home.api.post("/collaborators", {"email": email, "roleId": world.user_role_id})
    assert reply.status == 204, reply.body
    return next(entry for entry in world.read("/collaborators") if entry["email"] == email)


def _new_deployment(world: World) -> dict[str, Any]:
    reply = world.home.api.post("/deployments", _deployment_start(world, {}))
    assert reply.status == 200, reply.body
    return reply.json


def _deployment_start(world: World, _: Params) -> dict[str, Any]:
    return {
        "environmentName": world.environment["name"],
        "accountName": world.home.name,
        "projectSlug": world.project.project["slug"],
        "buildVersion": world.build["version"],
    }


def _build_start(world: World, _: Params) -> dict[str, Any]:
    return {
        "accountName": world.home.name,
        "projectSlug": world.project.project["slug"],
        "branch": world.build["branch"],
    }


def _project_settings(world: World, _: Params) -> dict[str, Any]:
    """The settings as read, but for the security descriptor: it names home's roles, which another account's body
    validation refuses (400) before the project is looked up. A PUT without it lifts every per-role restriction,
    and the project has none."""
    settings = world.read(world.project.path + "/settings")["settings"]
    return {name: value for name, value in settings.items() if name != "securityDescriptor"}


def _environment_update(world: World, _: Params) -> dict[str, Any]:
    environment = world.read(f"/environments/{world.environment['deploymentEnvironmentId']}/settings")["environment"]
    return {**environment, "settings": {**environment["settings"], "provider": environment["provider"]}}


def _user_update(world: World, _: Params) -> dict[str, Any]:
    user = world.bystanders["user"]
    return {name: user[name] for name in ("userId", "fullName", "email", "roleId")}


# Probes: what a refused request must leave as it was.


def _listed(path: str, key: str) -> Callable[[World, Params], Any]:
    return lambda world, _: sorted(entry[key] for entry in world.read(path))


def _reads(path: str) -> Callable[[World, Params], Any]:
    return lambda world, params: world.read(path.format(**params))


def _exists(path: str) -> Callable[[World, Params], Any]:
    return lambda world, params: world.status_of(path.format(**params))


def _new_build_agent(world: World) -> dict[str, Any]:
    reply = world.home.api.post("/build-agents", {"name": unique("doomed"), "images": ["Ubuntu2204"]})
    assert reply.status == 200, reply.body
    return dict(reply.json)


def _build_ids(world: World, _: Params) -> list[int]:
    return [build["buildId"] for build in world.read(world.project.path + "/history?recordsNumber=100")["builds"]]


def _deployment_ids(world: World, _: Params) -> list[int]:
    deployments = world.read(world.project.path + "/deployments")["deployments"]
    return [entry["deployment"]["deploymentId"] for entry in deployments]


def _sign_in(world: World, _: Params) -> dict[str, Any]:
    """A home user's e-mail address and password (the user is added on first use)."""
    if "signer" not in world.bystanders:
        email, password = f"{unique('signer')}@team.example", "matrix-password"
        added = world.home.api.post(
            "/users",
            {
                "fullName": "Signer",
                "email": email,
                "roleId": world.user_role_id,
                "password": password,
                "confirmPassword": password,
            },
        )
        assert added.status == 204, added.body
        world.bystanders["signer"] = {"email": email, "password": password}
    return world.bystanders["signer"]


def _drop_started_build(world: World, _: Params, reply: Reply) -> None:
    """A build a row started would run while later rows are timed: deleting it cancels it before it runs."""
    if reply.status == 200:
        assert world.home.api.delete(f"/builds/{reply.json['buildId']}").status == 204


def _drop_throwaway_build(world: World, params: Params, reply: Reply) -> None:
    if reply.status != 204:
        assert world.home.api.delete(f"/builds/{params['buildId']}").status == 204


def _settings_but_updated(world: World, params: Params) -> dict[str, Any]:
    return {name: value for name, value in _project_settings(world, params).items() if name != "updated"}


@dataclass(frozen=True)
class Request:
    """How a row's request is made, beyond its route: the query, the body, its target, what a refusal keeps."""

    query: str = ""
    body: Callable[[World, Params], Any] | None = None
    params: Callable[[World], Params] | None = None  # path parameters naming another shared resource
    target: Callable[[World], Params] | None = None  # path parameters of a throwaway target, made per caller
    probe: Callable[[World, Params], Any] | None = None
    cleanup: Callable[[World, Params, Reply], None] | None = None  # spares later rows the work a request left
    headers: dict[str, str] = field(default_factory=dict)


PROJECT = "/projects/{accountName}/{projectSlug}"
REQUESTS: dict[str, Request] = {
    "GET /users/{userId} (a role id)": Request(params=lambda world: {"userId": world.params["roleId"]}),
    "POST /users": Request(
        body=lambda world, _: {
            "fullName": "Matrix User",
            "email": f"{unique('added')}@team.example",
            "roleId": world.user_role_id,
            "generatePassword": True,
        },
        probe=_listed("/users", "email"),
    ),
    "PUT /users": Request(body=_user_update, probe=_reads("/users/{userId}")),
    "DELETE /users/{userId}": Request(
        target=lambda world: {"userId": world.home.add_user(f"{unique('doomed')}@team.example")["userId"]},
        probe=_exists("/users/{userId}"),
    ),
    "GET /collaborators/{userId}": Request(params=lambda world: {"userId": world.params["collaboratorId"]}),
    "POST /collaborators": Request(
        body=lambda world, _: {"email": f"{unique('invited')}@elsewhere.example", "roleId": world.user_role_id},
        probe=_listed("/collaborators", "email"),
    ),
    "PUT /collaborators": Request(
        body=lambda world, _: {"userId": world.bystanders["collaborator"]["userId"], "roleId": world.user_role_id},
        params=lambda world: {"userId": world.bystanders["collaborator"]["userId"]},
        probe=_reads("/collaborators/{userId}"),
    ),
    "DELETE /collaborators/{userId}": Request(
        target=lambda world: {"userId": _new_collaborator(world)["userId"]}, probe=_exists("/collaborators/{userId}")
    ),
    "POST /roles": Request(body=lambda world, _: {"name": unique("role")}, probe=_listed("/roles", "name")),
    "PUT /roles": Request(
        body=lambda world, _: world.bystanders["role"],
        params=lambda world: {"roleId": world.bystanders["role"]["roleId"]},
        probe=_reads("/roles/{roleId}"),
    ),
    "DELETE /roles/{roleId}": Request(
        target=lambda world: {"roleId": world.home.add_role(unique("doomed"))["roleId"]},
        probe=_exists("/roles/{roleId}"),
    ),
    "POST /environments": Request(
        body=lambda world, _: {
            "name": unique("env"),
            "provider": "Agent",
            "settings": {"providerSettings": [], "environmentVariables": []},
        },
        probe=_listed("/environments", "name"),
    ),
    "PUT /environments": Request(
        body=_environment_update, probe=_reads("/environments/{deploymentEnvironmentId}/settings")
    ),
    "DELETE /environments/{deploymentEnvironmentId}": Request(
        target=lambda world: {
            "deploymentEnvironmentId": add_environment(world.home, "Agent", {})["deploymentEnvironmentId"]
        },
        probe=_exists("/environments/{deploymentEnvironmentId}/settings"),
    ),
    "POST /build-agents": Request(
        body=lambda world, _: {"name": unique("agent"), "images": ["Visual Studio 2022"]},
        probe=_listed("/build-agents", "name"),
    ),
    "DELETE /build-agents/{agentId}": Request(
        target=lambda world: {"agentId": _new_build_agent(world)["agentId"]},
        probe=_listed("/build-agents", "agentId"),
    ),
    "POST /deployments": Request(body=_deployment_start, probe=_deployment_ids),
    "PUT /deployments/stop": Request(
        target=lambda world: {"deploymentId": _new_deployment(world)["deploymentId"]},
        body=lambda world, params: {"deploymentId": params["deploymentId"]},
        probe=lambda world, params: world.read(f"/deployments/{params['deploymentId']}")["deployment"]["status"],
    ),
    "POST /projects": Request(
        body=lambda world, _: {"repositoryProvider": "gitHub", "repositoryName": f"octo/{unique('repo')}"},
        probe=_listed("/projects", "slug"),
    ),
    "PUT /projects": Request(body=_project_settings, probe=_settings_but_updated),
    f"DELETE {PROJECT}": Request(
        target=lambda world: {"projectSlug": add_project(world.home)["slug"]}, probe=_exists(PROJECT + "/settings")
    ),
    f"PUT {PROJECT}/settings/yaml": Request(
        body=_reads(PROJECT + "/settings/yaml"), probe=_reads(PROJECT + "/settings/yaml")
    ),
    f"PUT {PROJECT}/settings/environment-variables": Request(
        body=lambda world, _: [{"name": "MATRIX", "value": {"isEncrypted": False, "value": "yes"}}],
        probe=_reads(PROJECT + "/settings/environment-variables"),
    ),
    f"PUT {PROJECT}/settings/build-number": Request(
        body=lambda world, params: {"nextBuildNumber": _project_settings(world, params)["nextBuildNumber"] + 1},
        probe=lambda world, params: _project_settings(world, params)["nextBuildNumber"],
    ),
    f"GET {PROJECT}/history": Request(query="?recordsNumber=10"),
    "POST /builds": Request(body=_build_start, probe=_build_ids, cleanup=_drop_started_build),
    "PUT /builds": Request(
        body=lambda world, _: {"buildId": world.build["buildId"]}, probe=_build_ids, cleanup=_drop_started_build
    ),
    # Cancelling the finished build changes nothing: its row needs no target of its own.
    "DELETE /builds/{accountName}/{projectSlug}/{buildVersion}": Request(
        probe=lambda world, params: _reads(PROJECT + "/build/{buildVersion}")(world, params)["build"]["status"]
    ),
    "DELETE /builds/{buildId}": Request(
        target=lambda world: {
            "buildId": (build := world.project.start(branch=world.build["branch"]))["buildId"],
            "buildVersion": build["version"],
        },
        probe=_exists(PROJECT + "/build/{buildVersion}"),
        cleanup=_drop_throwaway_build,
    ),
    **{
        "GET /buildjobs/{jobId}/artifacts/" + "/".join(f"{{part{index}}}" for index in range(1, depth + 1)): Request(
            params=lambda world, path=path: {f"part{index}": part for index, part in enumerate(path.split("/"), 1)}
        )
        for depth, path in enumerate(ARTIFACT_FILES, 1)
    },
    **{
        f"GET {PROJECT}/artifacts/" + "/".join(f"{{part{index}}}" for index in range(1, depth + 1)): Request(
            params=lambda world, path=path: {f"part{index}": part for index, part in enumerate(path.split("/"), 1)}
        )
        for depth, path in enumerate(ARTIFACT_FILES, 1)
    },
    "GET /projects/status/{badgeId}/{repositoryOwner}/{repositoryName}": Request(
        params=lambda world: {"badgeId": "github"}  # the provider, in the badge id's segment
    ),
    "POST /agent/jobs/next": Request(body=lambda world, _: {"name": "matrix"}),
    "POST /agent/jobs/{jobId}/log": Request(body=lambda world, _: {"lines": ["matrix"]}),
    "POST /agent/jobs/{jobId}/result": Request(body=lambda world, _: {"success": True}),
    # What a runner would send; refused, none of it may reach the job.
    "PUT /runner/jobs/{jobId}/log/{index}": Request(
        params=lambda world: {"index": "0"}, body=lambda world, _: "overwritten", probe=_reads("/buildjobs/{jobId}/log")
    ),
    "POST /runner/jobs/{jobId}/messages": Request(
        body=lambda world, _: {"messages": [{"kind": "message", "message": "forged", "category": "error"}]},
        probe=_reads("/buildjobs/{jobId}/messages"),
    ),
    **{
        f"{method} /runner/jobs/{{jobId}}/tests": Request(
            body=lambda world, _: {"tests": [{"testName": "forged", "outcome": "Failed"}]},
            probe=_reads("/buildjobs/{jobId}/tests"),
        )
        for method in ("POST", "PUT")
    },
    "PUT /runner/jobs/{jobId}/build": Request(
        body=lambda world, _: {"version": unique("forged")}, probe=_reads(PROJECT + "/build/{buildVersion}")
    ),
    "POST /runner/jobs/{jobId}/finish": Request(
        body=lambda world, _: {"result": "failed", "message": "forged", "logChunks": 0, "artifacts": []},
        probe=_reads(PROJECT + "/build/{buildVersion}"),
    ),
    # A hosted provider's event the service does not build from is answered 200 with why; the generic hook
    # names a branch and starts a build, which the cleanup deletes.
    **{
        f"POST /{provider}/webhook": Request(query="?id={webhookId}", body=lambda world, _: {})
        for provider in ("github", "gitea", "gitlab", "bitbucket")
    },
    "POST /git/webhook": Request(
        query="?id={webhookId}",
        body=lambda world, _: {"ref": f"refs/heads/{world.build['branch']}"},
        cleanup=_drop_started_build,
    ),
    "POST /session": Request(body=_sign_in, headers={"X-Requested-With": "matrix"}),
    "DELETE /session": Request(headers={"X-Requested-With": "matrix"}),
}


@dataclass(frozen=True)
class Row:
    """One endpoint: its route as the app declares it (without ``/api``) and the status each caller gets."""

    method: str
    route: str
    label: str
    expected: dict[str, int]
    departs: frozenset[str]  # callers whose cell is marked "!"

    @property
    def name(self) -> str:
        return f"{self.method} {self.route}{f' {self.label}' if self.label else ''}"

    @property
    def prefixed(self) -> bool:
        """Whether the route is also served under ``/api/account/{accountName}``."""
        return not self.route.startswith(UNPREFIXED)

    @property
    def request(self) -> Request:
        return REQUESTS.get(self.name, Request())


def parse_matrix(text: str) -> tuple[Row, ...]:
    rows = []
    for line in text.strip().splitlines()[1:]:
        if line.lstrip().startswith("#"):
            continue
        words = line.split()
        (method, route, *label), cells = words[: -len(CALLERS)], words[-len(CALLERS) :]
        marked = [(caller, cell.endswith("!")) for caller, cell in zip(CALLERS, cells, strict=True)]
        rows.append(
            Row(
                method,
                route,
                " ".join(label),
                {caller: int(cell.rstrip("!")) for caller, cell in zip(CALLERS, cells, strict=True)},
                frozenset(caller for caller, departs in marked if departs),
            )
        )
    return tuple(rows)


ROWS = parse_matrix(MATRIX)
PREFIXED_ROWS = tuple(entry for entry in ROWS if entry.prefixed)


PREFIXED_LISTS = tuple(entry for entry in PREFIXED_ROWS if entry.method == "GET" and "{" not in entry.route)


def column(caller: str) -> str:
    """The MATRIX column a caller's status is read from: a caller without an accepted key is no key at all."""
    return "anonymous" if caller in UNACCEPTED else caller


def designed(entry: Row, caller: str, under_prefix: bool) -> int:
    """The status ``caller`` gets; under home's prefix, another account's key finds nothing there."""
    return 404 if under_prefix and caller == "other" else entry.expected[column(caller)]


def cases() -> list[Any]:
    """One test per cell: every row called as the app declares it by every caller, then every row also served
    under home's prefix called there by the UNDER_PREFIX callers, and the lists there by the owner. A cell marked
    "!" is expected to fail, for its DISCREPANCIES reason."""
    unaccepted = list(UNACCEPTED)
    cells = [
        (entry, caller, False)
        for turn, entry in enumerate(ROWS)
        for caller in (*CALLERS, unaccepted[turn % len(unaccepted)])
    ]
    cells += [(entry, caller, True) for entry in PREFIXED_ROWS for caller in UNDER_PREFIX]
    cells += [(entry, "admin", True) for entry in PREFIXED_LISTS]
    return [
        pytest.param(
            entry,
            caller,
            under_prefix,
            id=f"{entry.name}{' under the prefix' if under_prefix else ''} as {caller}",
            marks=[pytest.mark.xfail(strict=True, reason=DISCREPANCIES[f"{entry.name} as {column(caller)}"])]
            if column(caller) in entry.departs
            else [],
        )
        for entry, caller, under_prefix in cells
    ]


def send(world: World, entry: Row, caller: Caller, params: Params) -> Reply:
    path = (entry.route + entry.request.query).format(**params)
    body = entry.request.body(world, params) if entry.request.body else None
    if isinstance(body, str):
        return caller.call(entry.method, path, raw=body.encode(), headers={"Content-Type": "text/plain"})
    return caller.call(entry.method, path, body, headers=entry.request.headers)


def assert_answers(world: World, entry: Row, caller: Caller, expected: int, watched: bool, targeted: bool) -> Reply:
    """``caller``'s request of ``entry`` answers ``expected``; when ``watched``, home is as it was afterwards."""
    request = entry.request
    params = {**world.params, **(request.params(world) if request.params else {})}
    if request.target and targeted:
        params |= request.target(world)
    watched = watched and request.probe is not None
    before = request.probe(world, params) if request.probe and watched else None
    reply = send(world, entry, caller, params)
    assert reply.status == expected, f"{reply.status} {reply.body[:300]!r}"
    if expected in (401, 403, 404):
        assert isinstance(reply.json, dict) and isinstance(reply.json.get("message"), str), reply.body
        assert reply.json["message"], reply.body
    if expected == 401 and not entry.route.startswith("/runner/"):
        assert reply.json == UNAUTHORIZED, reply.body
    if expected == 302:
        assert reply.headers.get("Location"), reply.headers
    if request.probe and watched:
        assert request.probe(world, params) == before, "a refused request changed what it must not"
    if request.cleanup and (targeted or request.target is None):  # never clean up the shared resources
        request.cleanup(world, params, reply)
    return reply


@pytest.mark.parametrize(("entry", "caller", "under_prefix"), cases())
def test_each_caller_gets_the_designed_status(world: World, entry: Row, caller: str, under_prefix: bool) -> None:
    """Callers without an accepted key are refused before any resource is looked up, and so is another account's
    key under home's prefix (the collaborator column calls every route there already): their requests go to the
    shared resources, not throwaway ones."""
    expected = designed(entry, caller, under_prefix)
    if under_prefix:
        calling = replace(world.callers[caller], prefix=f"/api/account/{world.home.name}")
        assert_answers(world, entry, calling, expected, watched=False, targeted=False)
        return
    calling = world.callers[caller] if entry.prefixed else replace(world.callers[caller], prefix="/api")
    watched = expected in (400, 403, 404) or caller == "other"  # a 401 comes before anything is looked up
    reply = assert_answers(world, entry, calling, expected, watched, targeted=caller not in UNACCEPTED)
    if caller == "other" and expected < 300:
        leaked = [name for name in world.home_names if name in reply.body.decode(errors="replace")]
        assert not leaked, f"another account's answer mentions home's {leaked}"


def test_every_route_the_app_serves_has_a_row() -> None:
    """Every route but the dashboard's page and files, which take no key and hold no data (test_dashboard.py)."""
    from app import app
    from chalicelib.api.dashboard import ROUTES as DASHBOARD_ROUTES
    from chalicelib.api.oidc import ROUTES as ISSUER_ROUTES  # no key, for everyone: the last test of this file

    served = {(method, path) for path, methods in app.routes.items() for method in methods} - DASHBOARD_ROUTES
    served -= ISSUER_ROUTES
    listed = {(entry.method, "/api" + entry.route) for entry in ROWS}
    listed |= {(entry.method, ACCOUNT_PREFIX + entry.route) for entry in PREFIXED_ROWS}
    assert not sorted(served - listed), f"routes without a row in the permission matrix: {sorted(served - listed)}"
    assert not sorted(listed - served), f"rows for routes the app does not serve: {sorted(listed - served)}"


def test_every_request_and_discrepancy_names_a_cell_of_the_matrix() -> None:
    names = {entry.name for entry in ROWS}
    assert not sorted(set(REQUESTS) - names), sorted(set(REQUESTS) - names)
    marked = {f"{entry.name} as {caller}" for entry in ROWS for caller in entry.departs}
    assert marked == set(DISCREPANCIES), (marked, set(DISCREPANCIES))


# Projects' per-role rights narrow what a role's permissions allow (chalicelib/domain/team/access.py); two of those
# refinements do not hold. The restriction is put on the shared project for a role no other test holds.


@contextmanager
def restricted(world: World, role_id: int, right: str) -> Iterator[None]:
    """The shared project denies ``right`` to the role while the block runs."""
    before = world.read(world.project.path + "/settings")["settings"]
    settings = copy.deepcopy(before)
    for ace in settings["securityDescriptor"]["roleAces"]:
        if ace["roleId"] == role_id:
            ace["accessRights"] = [{"name": right, "allowed": False}]
    assert world.home.api.put("/projects", settings).status == 204
    try:
        yield
    finally:
        assert world.home.api.put("/projects", before).status == 204


def test_an_environments_deployments_leave_out_a_project_the_caller_may_not_view(world: World) -> None:
    role = world.home.add_role(unique("hidden"), {"RunProjectBuild"})
    caller = member_of_role(world.home, role["name"])

    with restricted(world, role["roleId"], "View"):
        assert caller.get(world.project.path).status == 404
        reply = caller.get(f"/environments/{world.environment['deploymentEnvironmentId']}/deployments")

    assert reply.status == 200, reply.body
    assert [entry["project"]["slug"] for entry in reply.json["deployments"]] == []


def test_deleting_a_build_needs_the_delete_right_on_its_project(world: World) -> None:
    role = world.home.add_role(unique("build-deleters"), {"DeleteProjectBuilds"})
    caller = member_of_role(world.home, role["name"])
    build = world.project.start(branch=world.build["branch"])
    try:
        with restricted(world, role["roleId"], "Delete"):
            reply = caller.delete(f"/builds/{build['buildId']}")

        assert reply.status == 403, reply.body
        assert world.status_of(f"{world.project.path}/build/{build['version']}") == 200
    finally:
        world.home.api.delete(f"/builds/{build['buildId']}")


# Updating a role: nobody grants a permission their own role does not, and only an Administrator changes a role
# they are in (chalicelib/domain/team/roles.py, may_set); a role added grants nothing.


def _granting(role: dict[str, Any], granted: set[str]) -> dict[str, Any]:
    changed = copy.deepcopy(role)
    for group in changed["groups"]:
        for permission in group["permissions"]:
            permission["allowed"] = permission["name"] in granted
    return changed


def _grants(role: dict[str, Any]) -> set[str]:
    return {entry["name"] for group in role["groups"] for entry in group["permissions"] if entry["allowed"]}


@pytest.mark.parametrize("permission", [permission.value for permission in Permission])
def test_a_role_updater_grants_another_role_only_the_permissions_it_holds(world: World, permission: str) -> None:
    held = {"UpdateRoleDetails", "RunProjectBuild"}
    world.home.add_role(updaters := unique("updaters"), held)
    updater = member_of_role(world.home, updaters)
    target = world.home.add_role(unique("target"))
    admin = member_of_role(world.home, "Administrator")

    reply = updater.put("/roles", _granting(target, {permission}))

    assert reply.status == (200 if permission in held else 403), reply.body
    assert _grants(world.read(f"/roles/{target['roleId']}")) == ({permission} if permission in held else set())
    granted_by_admin = admin.put("/roles", _granting(target, {permission}))
    assert granted_by_admin.status == 200 and _grants(granted_by_admin.json) == {permission}


def test_only_an_administrator_changes_a_role_its_holder_is_in(world: World) -> None:
    everything = {permission.value for permission in Permission} - {"UpdateAccountDetails"}
    own = world.home.add_role(unique("almost-admins"), everything)
    holder = member_of_role(world.home, own["name"])

    for granted in (everything | {"UpdateAccountDetails"}, everything - {"ManageProjects"}, everything):
        reply = holder.put("/roles", _granting(own, granted) | {"name": unique("renamed")})
        assert reply.status == 403 and "Administrator" in reply.json["message"], reply.body
    assert world.read(f"/roles/{own['roleId']}") == own

    changed = world.home.api.put("/roles", _granting(own, {"RunProjectBuild"}))
    assert changed.status == 200 and _grants(changed.json) == {"RunProjectBuild"}


def test_a_role_adder_adds_a_role_that_grants_nothing_whatever_the_body_says(world: World) -> None:
    adder = world.callers["collaborator"]  # allowed AddRole, and neither updating nor the rest
    body = _granting(world.read(f"/roles/{world.user_role_id}"), {permission.value for permission in Permission})

    added = adder.post("/roles", body | {"name": unique("added"), "isSystem": True})

    assert added.status == 200, added.body
    assert _grants(added.json) == set() and added.json["isSystem"] is False
    assert _grants(world.read(f"/roles/{added.json['roleId']}")) == set()
    assert world.home.api.delete(f"/roles/{added.json['roleId']}").status == 204


# A start request's variables (issue 34, finding 3): a build started with them by a caller who may not update the
# project's settings gets no secure variables; names that change how programs start are refused from everyone.


def test_start_variables_withhold_secure_variables_unless_the_caller_may_update_the_project(
    world: World, git_server: GitServer
) -> None:
    secret = "matrix-secure-value"
    script = appveyor_yml("build_script:", '  - echo "secret:$SECRET:" | rev')
    project = BuildProject(world.home, git_server, {"appveyor.yml": script})
    variables = [{"name": "SECRET", "value": {"isEncrypted": True, "value": secret}}]
    assert world.home.api.put(f"{project.path}/settings/environment-variables", variables).status == 204
    updaters = world.home.add_role(unique("updaters"), {"RunProjectBuild", "UpdateProjectSettings"})
    updater = member_of_role(world.home, updaters["name"])
    denied_role = world.home.add_role(unique("updaters-denied"), {"RunProjectBuild", "UpdateProjectSettings"})
    denied = member_of_role(world.home, denied_role["name"])
    settings = world.read(project.path + "/settings")["settings"]
    for ace in settings["securityDescriptor"]["roleAces"]:
        if ace["roleId"] == denied_role["roleId"]:
            ace["accessRights"] = [{"name": "Update", "allowed": False}]
    assert world.home.api.put("/projects", settings).status == 204

    def decrypted(caller: Caller, variables: dict[str, str]) -> bool:
        body = {"accountName": world.home.name, "projectSlug": project.project["slug"]}
        reply = caller.post("/builds", {**body, "environmentVariables": variables})
        assert reply.status == 200, reply.body
        log = project.log(project.wait(reply.json["version"])["jobs"][0]["jobId"])
        assert secret not in log
        return f"secret:{secret}:"[::-1] in log  # masking does not catch it reversed: the value was there

    assert decrypted(world.home.api, {"FLAVOR": "debug"})  # an Administrator
    assert decrypted(updater, {"FLAVOR": "debug"})  # UpdateProjectSettings
    assert decrypted(world.callers["user"], {})  # no variables: nothing to withhold the secrets from
    assert not decrypted(world.callers["user"], {"FLAVOR": "debug"})  # RunProjectBuild alone
    assert not decrypted(denied, {"FLAVOR": "debug"})  # UpdateProjectSettings, taken away by the project


@pytest.mark.parametrize(("caller", "status"), [("admin", 400), ("user", 400), ("nothing", 403), ("other", 404)])
def test_start_variables_that_change_how_programs_start_are_refused_from_every_caller(
    world: World, caller: str, status: int
) -> None:
    def started() -> list[int]:
        return [build["buildId"] for build in world.read(f"{world.project.path}/history?recordsNumber=50")["builds"]]

    before = started()
    body = {**_build_start(world, {}), "environmentVariables": {"LD_PRELOAD": "/tmp/x.so", "BASH_ENV": "/tmp/x"}}

    reply = world.callers[caller].post("/builds", body)

    assert reply.status == status, reply.body
    if status == 400:
        assert "LD_PRELOAD" in reply.json["message"] and "BASH_ENV" in reply.json["message"]
    assert started() == before


def test_a_provider_or_agent_key_change_needs_the_environments_secrets_sent_again(world: World) -> None:
    """Rule of issue 34 (finding 2): who may update an environment sees its secrets' tokens, never their values; a
    change of where they go (another provider, another agent's key) needs them sent again, whoever the caller is."""
    updater = member_of_role(world.home, world.home.add_role(unique("updaters"), {"UpdateEnvironmentSettings"})["name"])
    environment = add_environment(world.home, "Agent", {"agents_timeout": "60", "password": "agent-pass"}, {"password"})
    path = f"/environments/{environment['deploymentEnvironmentId']}/settings"
    as_read = world.read(path)["environment"]
    sent_again = copy.deepcopy(as_read)
    for setting in sent_again["settings"]["providerSettings"]:
        if setting["name"] == "password":
            setting["value"]["value"] = "agent-pass"
    changes = {"provider": {"provider": "Webhook"}, "key": {"environmentAccessKey": unique("a-new-agent-key-0123")}}

    refused = {
        (who, name): caller.put("/environments", {**as_read, **change}).status
        for who, caller in (("updater", updater), ("admin", world.home.api))
        for name, change in changes.items()
    }
    unchanged = world.read(path)["environment"]
    accepted = world.home.api.put("/environments", {**sent_again, **changes["key"]}).status

    assert set(refused.values()) == {400}, refused
    assert (unchanged["provider"], unchanged["environmentAccessKey"]) == ("Agent", as_read["environmentAccessKey"])
    assert accepted == 200


# The accounts' OpenID Connect issuers (docs/oidc.md) are outside /api and take no key: every caller, whatever its
# Authorization header, reads home's discovery document and JWKS alike, and no caller finds an issuer of no account.
ISSUER_PATHS = ("/oidc/{account}/.well-known/openid-configuration", "/oidc/{account}/.well-known/jwks")


@pytest.mark.parametrize("path", ISSUER_PATHS)
@pytest.mark.parametrize("caller", (*CALLERS, *UNACCEPTED))
def test_every_caller_reads_an_issuers_documents_and_none_an_issuer_of_no_account(
    world: World, caller: str, path: str
) -> None:
    calling = replace(world.callers[caller], prefix="")
    first = calling.get(path.format(account=world.home.name))
    assert first.status == 200, first.body
    assert first.json == replace(world.home.api, prefix="").get(path.format(account=world.home.name)).json
    missing = calling.get(path.format(account=unique("nobody")))
    assert missing.status == 404 and missing.json["message"], missing.body


# Issue 38: a test results file, sent to the shared build's (ended) job; refused, none of it may reach the job.
REQUESTS["POST /testresults/{resultsFormat}/{jobId}"] = Request(
    params=lambda world: {"resultsFormat": "junit"},
    body=lambda world, _: '<testsuite name="forged"><testcase classname="forged" name="forged"/></testsuite>',
    probe=_reads("/buildjobs/{jobId}/tests"),
)


def _seeded_test(world: World) -> Params:
    """A test of the shared project, with one run (seeded as job finishes write it)."""
    from tests.history_seed import seed_tests

    return {"testId": seed_tests(world.project.project["projectId"], tests=1, runs=1)[0]}


def _quarantined_test(world: World) -> Params:
    """A throwaway test id put in the shared project's quarantine."""
    from chalicelib.store import tests_history

    project_id = world.project.project["projectId"]
    test_id = unique("quarantined")
    found = tests_history.get_quarantine(project_id)
    body = found.body if found else {"enabled": False, "tests": {}}
    body["tests"] = {**body.get("tests", {}), test_id: {"testName": test_id, "since": 0}}
    assert tests_history.save_quarantine(project_id, body, found.version if found else 0)
    return {"testId": test_id}


REQUESTS[f"GET {PROJECT}/tests/{{testId}}/history"] = Request(params=_seeded_test)
REQUESTS[f"PUT {PROJECT}/tests/quarantine"] = Request(
    body=lambda world, _: {"enabled": False}, probe=_reads(PROJECT + "/tests/quarantine")
)
REQUESTS[f"DELETE {PROJECT}/tests/quarantine"] = Request(
    target=_quarantined_test, probe=_reads(PROJECT + "/tests/quarantine")
)
REQUESTS[f"DELETE {PROJECT}/tests/quarantine/{{testId}}"] = Request(
    params=_seeded_test, target=_quarantined_test, probe=_reads(PROJECT + "/tests/quarantine")
)


# Issue 43: a value encrypted for the shared project; nothing is stored, so nothing can change.
REQUESTS["POST /account/encrypt"] = Request(
    body=lambda world, params: {"plainValue": "matrix-secret", "projectSlug": params["projectSlug"]},
)
