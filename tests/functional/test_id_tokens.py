"""Jobs' OpenID Connect ID tokens (issue 39), as a build and a relying party see them.

A build with ``id_token: true`` asks for its token from inside its scripts, with curl as GitHub Actions' tools do
and with ``appveyor GetIdToken``; the test then plays the relying party: it finds the issuer's keys through its
discovery document, over HTTP, and verifies the token with PyJWT. The attacks: the request token once the job ended,
a pull request's build (whose appveyor.yml is its author's), another account's issuer, altered, expired and
misdirected tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.serialization import load_der_public_key

from chalicelib import aws
from chalicelib.config import settings
from chalicelib.domain.job_identity import id_tokens
from chalicelib.local.pump import SqsPump
from chalicelib.store import builds as build_store
from chalicelib.store import jobs as job_store
from chalicelib.store import projects as project_store
from chalicelib.store import signing
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account

STS = "sts.amazonaws.com"
ASKS = appveyor_yml(
    "id_token: true",
    "build_script:",
    '  - echo "URL=$ACTIONS_ID_TOKEN_REQUEST_URL"',
    '  - echo "MASKED=$ACTIONS_ID_TOKEN_REQUEST_TOKEN"',
    '  - echo "REQ=${ACTIONS_ID_TOKEN_REQUEST_TOKEN:0:8} ${ACTIONS_ID_TOKEN_REQUEST_TOKEN:8}"',
    '  - test "$CONVEYOR_OIDC_REQUEST_URL" = "$ACTIONS_ID_TOKEN_REQUEST_URL"',
    '  - test "$CONVEYOR_OIDC_REQUEST_TOKEN" = "$ACTIONS_ID_TOKEN_REQUEST_TOKEN"',
    '  - \'echo "CURL=$(curl -sf "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=sts.amazonaws.com" '
    '-H "Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN")"\'',
    "  - appveyor GetIdToken -Audience cli.example",
    '  - T=$(appveyor GetIdToken -Audience cli.example) && echo "CLI=${T:0:20} ${T:20}"',
)
SHOWS_VARIABLES = [
    "build_script:",
    '  - echo "URL=[${ACTIONS_ID_TOKEN_REQUEST_URL:-none}] TOKEN=[${ACTIONS_ID_TOKEN_REQUEST_TOKEN:-none}]"',
    '  - echo "CONVEYOR=[${CONVEYOR_OIDC_REQUEST_URL:-none}]"',
]
NO_VARIABLES = "URL=[none] TOKEN=[none]"


@pytest.fixture
def make_project(account: Account, git_server: GitServer, pump: SqsPump):  # type: ignore[no-untyped-def]
    def make(files: dict[str, str]) -> BuildProject:
        return BuildProject(account, git_server, files)

    return make


@pytest.fixture
def asked(make_project) -> Iterator[tuple[BuildProject, dict[str, Any], str]]:  # type: ignore[no-untyped-def]
    """A finished build of a job that asked for ID tokens, and its log."""
    project = make_project({"appveyor.yml": ASKS})
    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    yield project, build, log


def line(log: str, name: str) -> str:
    found = re.search(rf"^{name}=(.*)$", log, re.MULTILINE)
    assert found, f"no {name}= line in:\n{log}"
    return found.group(1).strip()


def joined(log: str, name: str) -> str:
    """A value the script printed in two pieces (so the log's masking, which it would meet whole, lets it by)."""
    return "".join(line(log, name).split(" "))


def relying_party_keys(token: str) -> tuple[str, jwt.PyJWKSet, requests.Response, requests.Response]:
    """What a relying party finds from the token's issuer alone: the discovery document, then the JWKS it names,
    both fetched over HTTP as AWS fetches them."""
    issuer = jwt.decode(token, options={"verify_signature": False})["iss"]
    discovery = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=10)
    assert discovery.status_code == 200, discovery.text
    assert discovery.json()["issuer"] == issuer
    jwks = requests.get(discovery.json()["jwks_uri"], timeout=10)
    assert jwks.status_code == 200, jwks.text
    return issuer, jwt.PyJWKSet.from_dict(jwks.json()), discovery, jwks


def verified(token: str, issuer: str, audience: str) -> dict[str, Any]:
    """The token's claims as a relying party trusting ``issuer`` for ``audience`` accepts them (else PyJWT raises)."""
    _, keys, _, _ = relying_party_keys(token)
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(key for key in keys.keys if key.key_id == kid)
    claims: dict[str, Any] = jwt.decode(
        token,
        key,
        algorithms=["RS256"],
        audience=audience,
        issuer=issuer,
        options={"require": ["exp", "iat", "nbf", "iss", "aud", "sub", "jti"]},
    )
    return claims


def test_a_job_that_asks_gets_a_token_that_verifies_through_its_issuers_discovery(
    asked: tuple[BuildProject, dict[str, Any], str], api_url: str
) -> None:
    project, build, log = asked
    token = json.loads(line(log, "CURL"))["value"]
    account = project.project["accountName"]
    issuer = f"{api_url}/oidc/{account.lower()}"

    claims = verified(token, issuer, STS)

    job = build["jobs"][0]
    branch = build["branch"]
    assert claims["sub"] == f"project:{account}/{project.project['slug']}:ref:refs/heads/{branch}"
    assert claims["aud"] == STS
    assert claims["exp"] - claims["iat"] == 600 and claims["nbf"] == claims["iat"]
    assert {key: claims[key] for key in ("account", "project", "project_id", "ref", "ref_type", "sha")} == {
        "account": account,
        "project": project.project["slug"],
        "project_id": project.project["projectId"],
        "ref": f"refs/heads/{branch}",
        "ref_type": "branch",
        "sha": build["commitId"],
    }
    assert {key: claims[key] for key in ("build_id", "build_version", "job_id", "job_name")} == {
        "build_id": build["buildId"],
        "build_version": build["version"],
        "job_id": job["jobId"],
        "job_name": job["name"],
    }
    assert claims["repository"] and claims["executor"] and "pull_request" not in claims
    assert "environment" not in claims
    assert jwt.get_unverified_header(token)["alg"] == "RS256"


def test_the_issuers_documents_are_public_cacheable_and_name_what_aws_needs(
    asked: tuple[BuildProject, dict[str, Any], str],
) -> None:
    _, _, log = asked
    token = json.loads(line(log, "CURL"))["value"]
    issuer, keys, discovery, jwks = relying_party_keys(token)  # fetched with no key at all

    document = discovery.json()
    assert document["jwks_uri"] == f"{issuer}/.well-known/jwks"
    assert document["response_types_supported"] == ["id_token"]
    assert document["subject_types_supported"] == ["public"]
    assert document["id_token_signing_alg_values_supported"] == ["RS256"]
    assert {"sub", "aud", "iss", "ref", "environment", "pull_request"} <= set(document["claims_supported"])
    for reply in (discovery, jwks):
        assert "public" in reply.headers["Cache-Control"] and "max-age=" in reply.headers["Cache-Control"]
    assert [key.key_id for key in keys.keys] == [jwt.get_unverified_header(token)["kid"]]
    unknown = requests.get(issuer.rsplit("/", 1)[0] + "/no-such-account/.well-known/jwks", timeout=10)
    assert unknown.status_code == 404 and unknown.json()["message"]


def test_kms_signs_with_the_key_whose_public_half_is_published_and_no_other() -> None:
    published = signing.public_key(settings().oidc_signing_key)
    signature = signing.sign(published.key_id, b"header.claims")
    public = load_der_public_key(published.der)

    assert isinstance(public, RSAPublicKey)
    public.verify(signature, b"header.claims", PKCS1v15(), SHA256())  # raises unless the published half verifies it
    with pytest.raises(signing.KeyUnavailable):
        signing.public_key("alias/conveyor-no-such-key")
    with pytest.raises(ValueError, match="at most"):
        signing.sign(published.key_id, b"x" * (signing.MAX_MESSAGE_BYTES + 1))


def test_the_request_token_is_masked_and_refused_once_the_job_ended(
    asked: tuple[BuildProject, dict[str, Any], str],
) -> None:
    _, _, log = asked
    request_token = joined(log, "REQ")
    assert request_token.startswith(id_tokens.TOKEN_PREFIX)
    assert line(log, "MASKED") == "[secure]" and request_token not in log

    reply = requests.get(
        line(log, "URL") + f"&audience={STS}", headers={"Authorization": f"Bearer {request_token}"}, timeout=10
    )

    assert reply.status_code == 401, reply.text
    assert "value" not in reply.json() and reply.json()["message"]


def test_appveyor_get_id_token_prints_a_token_the_log_masks(
    asked: tuple[BuildProject, dict[str, Any], str], api_url: str
) -> None:
    project, _, log = asked
    token = joined(log, "CLI")
    issuer = f"{api_url}/oidc/{project.project['accountName'].lower()}"

    claims = verified(token, issuer, "cli.example")

    assert claims["aud"] == "cli.example"
    assert token not in log  # the command's own output, printed whole, is masked
    assert "[secure]" in log.split("GetIdToken -Audience cli.example", 1)[1]


def test_a_job_that_does_not_ask_gets_no_variables(make_project) -> None:  # type: ignore[no-untyped-def]
    project = make_project({"appveyor.yml": appveyor_yml(*SHOWS_VARIABLES)})
    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    assert NO_VARIABLES in log and "CONVEYOR=[none]" in log


def _pull_request_build(project: BuildProject, yml: str) -> tuple[dict[str, Any], str]:
    head = project.repository.commit({"appveyor.yml": yml}, branch="fork-feature")
    project.repository.set_ref("refs/pull/9/head", head)
    build = project.wait(project.start(pullRequestId=9)["version"])
    return build, project.log(build["jobs"][0]["jobId"])


def test_a_pull_requests_build_gets_no_token_even_when_its_appveyor_yml_allows_it(make_project) -> None:  # type: ignore[no-untyped-def]
    fork_yml = appveyor_yml("id_token: true", "id_token_pull_requests: true", *SHOWS_VARIABLES)
    project = make_project({"appveyor.yml": appveyor_yml("id_token: true", *SHOWS_VARIABLES)})

    build, log = _pull_request_build(project, fork_yml)

    assert build["status"] == "success", log
    assert NO_VARIABLES in log and "CONVEYOR=[none]" in log
    assert "no ID token for this build" in log


def test_a_pull_requests_build_gets_a_token_once_the_projects_settings_allow_it(  # type: ignore[no-untyped-def]
    make_project, api_url: str
) -> None:
    project = make_project({"appveyor.yml": appveyor_yml("id_token: true", *SHOWS_VARIABLES)})
    settings_reply = project.account.api.get(project.path + "/settings")
    allowed = settings_reply.json["settings"]
    allowed["configuration"]["idTokenPullRequests"] = True
    assert project.account.api.put("/projects", allowed).status == 204
    fork_yml = appveyor_yml(
        "id_token: true",
        "build_script:",
        '  - \'echo "CURL=$(curl -sf "$ACTIONS_ID_TOKEN_REQUEST_URL" '
        '-H "Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN")"\'',
    )

    build, log = _pull_request_build(project, fork_yml)

    assert build["status"] == "success", log
    token = json.loads(line(log, "CURL"))["value"]
    account = project.project["accountName"]
    issuer = f"{api_url}/oidc/{account.lower()}"
    claims = verified(token, issuer, issuer)  # no audience asked for: the issuer's own URL
    assert claims["sub"] == f"project:{account}/{project.project['slug']}:pull_request"
    assert claims["pull_request"] == 9 and claims["ref_type"] == "pull_request"


# The relying party's side: every token but a good one, for the right audience and issuer, is refused.


@pytest.fixture
def good(asked: tuple[BuildProject, dict[str, Any], str], api_url: str) -> tuple[str, str]:
    project, _, log = asked
    return json.loads(line(log, "CURL"))["value"], f"{api_url}/oidc/{project.project['accountName'].lower()}"


def _subject(build: dict[str, Any], project: BuildProject) -> id_tokens.Subject:
    job = job_store.get_job(build["jobs"][0]["jobId"])
    stored_build = build_store.get_build(build["projectId"], build["buildId"])
    stored_project = project_store.get_project_by_id(job.account_id if job else 0, build["projectId"])
    assert job and stored_build and stored_project
    return id_tokens.Subject(stored_project, stored_build, job)


def test_a_relying_party_refuses_an_altered_token(good: tuple[str, str]) -> None:
    token, issuer = good
    header, payload, signature = token.split(".")
    claims = json.loads(jwt.utils.base64url_decode(payload))
    claims["sub"] = claims["sub"].replace(":ref:", ":environment:production-")
    forged = ".".join([header, jwt.utils.base64url_encode(json.dumps(claims).encode()).decode(), signature])

    with pytest.raises(jwt.InvalidSignatureError):
        verified(forged, issuer, STS)


def test_a_relying_party_refuses_a_token_for_another_audience(good: tuple[str, str]) -> None:
    token, issuer = good
    with pytest.raises(jwt.InvalidAudienceError):
        verified(token, issuer, "api://another-cloud")


def test_a_relying_party_trusting_another_accounts_issuer_refuses_the_token(
    good: tuple[str, str], other_account: Account, api_url: str
) -> None:
    token, _ = good
    other_issuer = f"{api_url}/oidc/{other_account.name.lower()}"
    assert requests.get(f"{other_issuer}/.well-known/openid-configuration", timeout=10).status_code == 200

    with pytest.raises(jwt.InvalidIssuerError):
        verified(token, other_issuer, STS)


def test_a_relying_party_refuses_an_expired_token(
    asked: tuple[BuildProject, dict[str, Any], str], good: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, _ = asked
    _, issuer = good
    monkeypatch.setattr(id_tokens, "LIFETIME_SECONDS", -301)  # expired a while ago (IAM forgives 5 minutes' skew)

    expired = id_tokens.signed_token(_subject(build, project), STS, "")

    with pytest.raises(jwt.ExpiredSignatureError):
        verified(expired, issuer, STS)


def test_every_token_is_signed_by_kms_which_verifies_it_as_its_own(
    asked: tuple[BuildProject, dict[str, Any], str], good: tuple[str, str]
) -> None:
    """The service holds no private key: each token is one KMS Sign call, and KMS verifies the signature as its
    own key's (the kid names it)."""
    project, build, _ = asked
    token, _ = good
    kms = aws.client("kms")
    signing_input, _, signature = token.rpartition(".")
    answer = kms.verify(
        KeyId=settings().oidc_signing_key,
        Message=signing_input.encode(),
        MessageType="RAW",
        Signature=jwt.utils.base64url_decode(signature),
        SigningAlgorithm="RSASSA_PKCS1_V1_5_SHA_256",
    )
    assert answer["SignatureValid"]
    key_id = kms.describe_key(KeyId=settings().oidc_signing_key)["KeyMetadata"]["KeyId"]
    assert jwt.get_unverified_header(token)["kid"] == key_id
    calls: list[str] = []

    def count(model: Any, **_: Any) -> None:
        calls.append(model.name)

    kms.meta.events.register("before-call.kms", count)
    try:
        for _ in range(3):
            id_tokens.signed_token(_subject(build, project), STS, "")
    finally:
        kms.meta.events.unregister("before-call.kms", count)
    assert calls == ["Sign"] * 3


# Deployments: the S3 provider assumes a role with the deployment's ID token instead of stored keys.


@pytest.fixture
def sts_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """The AssumeRoleWithWebIdentity calls the emulator's STS answers, as it was sent them (moto keeps the role it
    lent, not the token it was shown)."""
    from moto.sts.responses import TokenResponse

    calls: list[dict[str, str]] = []
    answer = TokenResponse.assume_role_with_web_identity

    def recorded(self: TokenResponse) -> Any:
        calls.append({name: self._get_param(name) for name in ("RoleArn", "RoleSessionName", "WebIdentityToken")})
        return answer(self)

    monkeypatch.setattr(TokenResponse, "assume_role_with_web_identity", recorded)
    return calls


@pytest.fixture
def signing_keys(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The access key of each request the emulator took as signed."""
    from chalicelib.local.signatures import SignedRequestsOnly

    keys: list[str] = []
    check = SignedRequestsOnly._credentials_of

    def recorded(self: SignedRequestsOnly, access_key: str) -> Any:
        found = check(self, access_key)
        if found is not None:
            keys.append(access_key)
        return found

    monkeypatch.setattr(SignedRequestsOnly, "_credentials_of", recorded)
    return keys


def test_an_s3_deployment_with_role_arn_assumes_it_with_the_deployments_id_token_and_uploads_with_its_keys(
    built: tuple[BuildProject, dict[str, Any]],
    sts_calls: list[dict[str, str]],
    signing_keys: list[str],
    api_url: str,
) -> None:
    from moto.sts.models import sts_backends

    from tests.deployments import add_environment, deployed, deployment_log

    project, build = built
    target = f"oidc-target-{build['buildId']}"
    aws.client("s3").create_bucket(Bucket=target)
    role = "arn:aws:iam::123456789012:role/deployer"
    environment = add_environment(project.account, "S3", {"bucket": target, "role_arn": role})

    deployment = deployed(project, environment, build["version"])

    log = deployment_log(project, deployment)
    assert deployment["status"] == "success", log
    assert f"Assumed {role} with the deployment's ID token" in log
    listed = aws.client("s3").list_objects_v2(Bucket=target).get("Contents", [])
    assert sorted(entry["Key"] for entry in listed) == ["out/app.txt", "site/index.html"]
    ((call),) = sts_calls
    assert call["RoleArn"] == role
    account = project.project["accountName"]
    claims = verified(call["WebIdentityToken"], f"{api_url}/oidc/{account.lower()}", STS)
    assert claims["sub"] == f"project:{account}/{project.project['slug']}:environment:{environment['name']}"
    assert claims["environment"] == environment["name"] and claims["build_id"] == build["buildId"]
    lent = [
        role_lent
        for account_backends in sts_backends.values()
        for backend in account_backends.values()
        for role_lent in backend.assumed_roles
        if role_lent.role_arn == role
    ]
    assert len(lent) == 1 and lent[0].session_name == call["RoleSessionName"]
    assert lent[0].access_key_id in signing_keys  # the uploads were signed with the role's temporary keys


def test_an_s3_deployment_with_stored_keys_and_role_arn_is_refused_saying_why(
    built: tuple[BuildProject, dict[str, Any]], sts_calls: list[dict[str, str]]
) -> None:
    from tests.deployments import add_environment, deployed, deployment_log

    project, build = built
    aws.client("s3").create_bucket(Bucket=f"oidc-both-{build['buildId']}")
    settings_given = {
        "bucket": f"oidc-both-{build['buildId']}",
        "role_arn": "arn:aws:iam::123456789012:role/deployer",
        "access_key_id": "AKIAEXAMPLE",
        "secret_access_key": "not-a-real-secret",
    }
    environment = add_environment(project.account, "S3", settings_given, secure={"secret_access_key"})

    deployment = deployed(project, environment, build["version"])

    assert deployment["status"] == "failed"
    assert "leave access_key_id and secret_access_key empty" in deployment_log(project, deployment)
    assert sts_calls == []


def test_a_build_cannot_trade_its_id_token_for_the_local_emulators_keys(
    good: tuple[str, str], aws_endpoint: str
) -> None:
    """Locally a build reaches the emulator's port, and moto checks no token: an unsigned AssumeRoleWithWebIdentity
    from outside the stack's process is refused like any unsigned request, a valid ID token and all."""
    token, _ = good
    reply = requests.post(
        aws_endpoint + "/",
        data={
            "Action": "AssumeRoleWithWebIdentity",
            "Version": "2011-06-15",
            "RoleArn": "arn:aws:iam::123456789012:role/anything",
            "RoleSessionName": "build",
            "WebIdentityToken": token,
        },
        timeout=10,
    )
    assert reply.status_code == 403, reply.text
    assert "AccessKeyId" not in reply.text


def test_a_rotation_publishes_the_next_key_before_it_signs_and_keeps_the_old_one_while_its_tokens_live(
    asked: tuple[BuildProject, dict[str, Any], str], good: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, build, _ = asked
    old_token, issuer = good
    old_kid = jwt.get_unverified_header(old_token)["kid"]
    kms = aws.client("kms")
    new_key = kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]

    def published() -> list[str]:
        return [key["kid"] for key in requests.get(f"{issuer}/.well-known/jwks", timeout=10).json()["keys"]]

    monkeypatch.setenv("CONVEYOR_OIDC_PUBLISHED_KEYS", new_key)  # step 1: published, not signing
    assert published() == [old_kid, new_key]
    assert jwt.get_unverified_header(id_tokens.signed_token(_subject(build, project), STS, ""))["kid"] == old_kid

    monkeypatch.setenv("CONVEYOR_OIDC_PUBLISHED_KEYS", settings().oidc_signing_key)  # step 3: the new one signs
    monkeypatch.setenv("CONVEYOR_OIDC_SIGNING_KEY", new_key)
    new_token = id_tokens.signed_token(_subject(build, project), STS, "")

    assert published() == [new_key, old_kid]
    assert jwt.get_unverified_header(new_token)["kid"] == new_key
    assert verified(new_token, issuer, STS)["sub"] == verified(old_token, issuer, STS)["sub"]


def test_projects_and_builds_stored_before_id_tokens_ask_for_none(
    asked: tuple[BuildProject, dict[str, Any], str],
) -> None:
    """Configurations stored before ``idToken`` existed lack it: they ask for nothing, and say nothing of it."""
    project, build, _ = asked
    subject = _subject(build, project)
    before = {"idToken", "idTokenPullRequests"}
    old = id_tokens.Subject(
        replace(
            subject.project, configuration={k: v for k, v in subject.project.configuration.items() if k not in before}
        ),
        replace(subject.build, configuration={k: v for k, v in subject.build.configuration.items() if k not in before}),
        subject.job,
    )
    said: list[str] = []

    assert id_tokens.request_variables(old, "http://127.0.0.1:1", said.append) == ({}, [])
    assert said == []


def test_a_deployments_start_request_cannot_point_role_arn_at_another_role(
    built: tuple[BuildProject, dict[str, Any]], sts_calls: list[dict[str, str]]
) -> None:
    """role_arn is a destination: its $(NAME) takes the environment's variables, never the start request's."""
    from tests.deployments import add_environment, deploy, wait_for_deployment

    project, build = built
    target = f"oidc-dest-{build['buildId']}"
    aws.client("s3").create_bucket(Bucket=target)
    own = "arn:aws:iam::123456789012:role/deployer"
    environment = add_environment(
        project.account, "S3", {"bucket": target, "role_arn": "$(DEPLOY_ROLE)"}, DEPLOY_ROLE=own
    )

    started = deploy(
        project,
        environment,
        build["version"],
        environmentVariables={"DEPLOY_ROLE": "arn:aws:iam::123456789012:role/admin"},
    )
    assert started.status == 200, started.body
    finished = wait_for_deployment(project.account, started.json["deploymentId"])

    assert finished["status"] == "success"
    assert [call["RoleArn"] for call in sts_calls] == [own]
