"""Jobs' OpenID Connect ID tokens: an issuer per account, tokens signed by KMS, GitHub Actions' request contract.

A job that asks (``id_token: true`` in its appveyor.yml, or in the project's settings) gets two variables,
``ACTIONS_ID_TOKEN_REQUEST_URL`` and ``ACTIONS_ID_TOKEN_REQUEST_TOKEN`` (and the same as ``CONVEYOR_OIDC_*``); a
GET of the URL with ``&audience=AUD`` and the token as a bearer answers ``{"value": "<jwt>"}``. The request token is
derived from the job's token (an HMAC keyed with its stored hash), so it names that one attempt of that one job and
dies with it, and it can do nothing else: the job's own token stays the runner's. A build whose secrets are withheld
(a pull request's, one started with variables by a caller who may not change the project) gets neither, unless the
project's own settings say ``id_token_pull_requests: true``.

The token's issuer is ``{base URL}/oidc/{account}``, whose discovery document and JWKS are public. The private key
never leaves KMS (store/signing.py); every account's issuer publishes the same keys, so what tells accounts apart
is ``iss``, which every relying party checks (AWS finds the provider by it). docs/oidc.md says what each claim means.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from chalicelib.config import settings
from chalicelib.core.builds import Build
from chalicelib.core.jobs import Job
from chalicelib.core.projects import Project
from chalicelib.core.repository_names import public_repository_name
from chalicelib.core.status import Status
from chalicelib.domain.configuration.job_overrides import job_configuration
from chalicelib.domain.job_identity.job_tokens import build_and_project
from chalicelib.domain.projects.request_variables import withholds_secrets
from chalicelib.errors import Forbidden, Invalid, NotFound, Unauthorized, Unavailable
from chalicelib.store import accounts as account_store
from chalicelib.store import jobs as job_store
from chalicelib.store import signing

log = logging.getLogger(__name__)
TOKEN_PREFIX = "cvyo_"
LIFETIME_SECONDS = 600  # GitHub's tokens last 5 minutes past their use, Buildkite's 5, GitLab's an hour
MAX_AUDIENCE_CHARS = 256
REQUEST_VARIABLES = (
    ("ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"),
    ("CONVEYOR_OIDC_REQUEST_URL", "CONVEYOR_OIDC_REQUEST_TOKEN"),
)
CLAIMS = (
    "iss",
    "sub",
    "aud",
    "exp",
    "iat",
    "nbf",
    "jti",
    "account",
    "project",
    "project_id",
    "repository",
    "ref",
    "ref_type",
    "sha",
    "pull_request",
    "build_id",
    "build_version",
    "job_id",
    "job_name",
    "image",
    "executor",
    "environment",
)
_DERIVATION = b"conveyor-oidc-request\0"


@dataclass(frozen=True)
class Subject:
    """What a token is issued for: a build's job, or a deployment of its build (to ``environment``, when named)."""

    project: Project
    build: Build
    job: Job
    environment: str | None = None


def issuer(base_url: str, account_name: str) -> str:
    """An account's issuer URL: ``{base URL}/oidc/{account}`` (account names in URLs ignore case); the base is
    CONVEYOR_BASE_URL, else the URL runners call (CONVEYOR_RUNNER_API_URL), else ``base_url``, the request's."""
    config = settings()
    base = config.base_url or config.runner_api_url or base_url
    return f"{base.rstrip('/')}/oidc/{quote(account_name.strip().lower(), safe='')}"


def discovery(base_url: str, account_name: str) -> dict[str, Any]:
    """The account's OpenID Provider configuration (``/.well-known/openid-configuration``)."""
    url = issuer(base_url, _account_name(account_name))
    return {
        "issuer": url,
        "jwks_uri": f"{url}/.well-known/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid"],
        "claims_supported": list(CLAIMS),
    }


def jwks(account_name: str) -> dict[str, Any]:
    """The account's JSON Web Key Set: the signing key and every key published beside it (docs/oidc.md, rotation)."""
    _account_name(account_name)
    config = settings()
    keys: dict[str, dict[str, Any]] = {}
    for key in (config.oidc_signing_key, *config.oidc_published_keys):
        try:
            public = signing.public_key(key)
            keys.setdefault(public.key_id, _jwk(public))
        except signing.KeyUnavailable as error:  # the others are still published: tokens they signed still verify
            log.error("OIDC key %s is not published: %s", key, error)
    return {"keys": list(keys.values())}


def _account_name(account_name: str) -> str:
    account = account_store.get_account_by_name(account_name) if account_name else None
    if account is None:
        raise NotFound("No account of that name issues tokens here.")
    return account.name


def _jwk(public: signing.PublicKey) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
    from cryptography.hazmat.primitives.serialization import load_der_public_key
    from jwt.algorithms import RSAAlgorithm

    key = load_der_public_key(public.der)
    if not isinstance(key, RSAPublicKey):
        raise signing.KeyUnavailable(f"{public.key_id} is not an RSA key")
    jwk: dict[str, Any] = RSAAlgorithm.to_jwk(key, as_dict=True)
    return {**jwk, "kid": public.key_id, "alg": "RS256", "use": "sig"}


def asks(project: Project, build: Build, job: Job) -> bool:
    """Whether the job asks for ID tokens: ``id_token: true`` in its configuration, or in the project's settings."""
    return bool(job_configuration(build.configuration, job.spec).get("idToken") or project.configuration.get("idToken"))


def allowed(project: Project, build: Build) -> bool:
    """Whether the build may have ID tokens: not when its secrets are withheld (a pull request's, say), unless the
    project's own settings allow it (a repository's appveyor.yml cannot: it is the pull request's)."""
    return not withholds_secrets(build) or bool(project.configuration.get("idTokenPullRequests"))


def request_token(job: Job) -> str | None:
    """The job's request token: derived from its running attempt's token (through the hash stored of it)."""
    if job.token_hash is None:
        return None
    mac = hmac.new(job.token_hash.encode(), _DERIVATION + job.job_id.encode(), hashlib.sha256).digest()
    return TOKEN_PREFIX + base64.urlsafe_b64encode(mac).decode().rstrip("=")


def request_variables(
    subject: Subject, api_url: str | None, warn: Callable[[str], None]
) -> tuple[dict[str, str], list[str]]:
    """The variables of a job that asks for ID tokens, and the secret among them: none when it does not ask, or
    may not have them (``warn`` says why)."""
    project, build, job = subject.project, subject.build, subject.job
    if not asks(project, build, job):
        return {}, []
    token = request_token(job)
    if not allowed(project, build):
        warn(
            "id_token: no ID token for this build: its secrets are withheld (a pull request's build, or one started "
            "with variables by a caller who may not change the project), and the project's settings do not allow "
            "them for such builds (id_token_pull_requests)."
        )
        return {}, []
    if token is None or not api_url:
        warn("id_token: no ID token for this job: the service does not know its own URL (CONVEYOR_BASE_URL).")
        return {}, []
    url = f"{api_url.rstrip('/')}/api/runner/jobs/{quote(job.job_id, safe='')}/id-token?api-version=1"
    variables: dict[str, str] = {}
    for url_name, token_name in REQUEST_VARIABLES:
        variables[url_name], variables[token_name] = url, token
    return variables, [token]


def job_id_token(job_id: str, authorization: str | None, audience: str | None, base_url: str) -> str:
    """An ID token for the running job the request token was derived for; 401 for any other, or once it ended."""
    scheme, _, sent = (authorization or "").partition(" ")
    sent = sent.strip()
    if scheme.lower() != "bearer" or not sent.startswith(TOKEN_PREFIX):
        raise Unauthorized("An ID token request token is required (Authorization: Bearer <token>).")
    job = job_store.get_job(job_id) if job_id else None
    expected = request_token(job) if job is not None else None
    if job is None or expected is None or not hmac.compare_digest(expected, sent):
        raise Unauthorized("The request token is not valid for this job, or the job has ended.")
    if job.status not in (Status.RUNNING, Status.CANCELLING) or job.deployment_id is not None:
        raise Unauthorized("The job has ended: its request token no longer works.")
    build, project = build_and_project(job)
    if not asks(project, build, job) or not allowed(project, build):  # the settings may have changed since
        raise Forbidden("This job may not have ID tokens (id_token, id_token_pull_requests).")
    return signed_token(Subject(project, build, job), audience, base_url)


def deployment_id_token(subject: Subject, audience: str | None) -> str:
    """An ID token for a deployment job, as its provider assumes a role with it (the S3 provider's role_arn)."""
    if not allowed(subject.project, subject.build):
        raise Forbidden(
            "No ID token for a deployment of a build whose secrets are withheld (a pull request's), unless the "
            "project's settings allow them for such builds (id_token_pull_requests)."
        )
    config = settings()
    if not (config.base_url or config.runner_api_url):
        raise Forbidden("No ID token: the service does not know its own URL (set CONVEYOR_BASE_URL).")
    return signed_token(subject, audience, "")


def signed_token(subject: Subject, audience: str | None, base_url: str) -> str:
    """The subject's ID token for ``audience`` (default: its issuer), signed with the signing key in KMS."""
    from jwt.utils import base64url_encode

    url = issuer(base_url, subject.project.account_name)
    claims = token_claims(subject, url, _audience(audience) or url, int(time.time()))
    try:
        public = signing.public_key(settings().oidc_signing_key)
        header = {"alg": "RS256", "typ": "JWT", "kid": public.key_id}
        signing_input = b".".join(base64url_encode(_compact(part)) for part in (header, claims))
        signature = signing.sign(public.key_id, signing_input)
    except signing.KeyUnavailable as error:
        log.error("OIDC signing key: %s", error)
        raise Unavailable("ID tokens cannot be signed now: the service's signing key is not usable.") from error
    return (signing_input + b"." + base64url_encode(signature)).decode()


def token_claims(subject: Subject, issuer_url: str, audience: str, now: int) -> dict[str, Any]:
    """Every claim of the subject's token (None-valued claims left out)."""
    project, build, job = subject.project, subject.build, subject.job
    ref, ref_type = _ref(build)
    pull_request = build.pull_request
    claims: dict[str, Any] = {
        "iss": issuer_url,
        "sub": subject_of(subject),
        "aud": audience,
        "iat": now,
        "nbf": now,
        "exp": now + LIFETIME_SECONDS,
        "jti": secrets.token_urlsafe(16),
        "account": project.account_name,
        "project": project.slug,
        "project_id": project.project_id,
        "repository": public_repository_name(project),
        "ref": ref,
        "ref_type": ref_type,
        "sha": build.commit.get("commitId") or None,
        "pull_request": _number(pull_request.get("pullRequestId")) if pull_request else None,
        "build_id": build.build_id,
        "build_version": build.version,
        "job_id": job.job_id,
        "job_name": job.name,
        "image": job.spec.get("image") or None,
        "executor": job.executor,
        "environment": subject.environment,
    }
    return {name: value for name, value in claims.items() if value is not None}


def subject_of(subject: Subject) -> str:
    """``project:{account}/{slug}:`` then ``environment:{name}``, ``pull_request`` (a build whose secrets are
    withheld: a pull request's, or one started with variables by a caller who may not update the project; a trust
    policy for a branch must not take it) or ``ref:{ref}``, ``:`` in a value written ``%3A`` (GitHub's form, with
    ``project`` for ``repo``)."""
    project, build = subject.project, subject.build
    head = f"project:{_escaped(project.account_name)}/{_escaped(project.slug)}"
    if subject.environment is not None:
        return f"{head}:environment:{_escaped(subject.environment)}"
    if withholds_secrets(build):  # a pull request's, or one a caller who may not change the project shaped
        return f"{head}:pull_request"
    return f"{head}:ref:{_escaped(_ref(build)[0])}"


def _ref(build: Build) -> tuple[str, str]:
    if build.pull_request is not None:
        return build.ref, "pull_request"
    if build.ref.startswith("refs/tags/"):
        return build.ref, "tag"
    return f"refs/heads/{build.branch}", "branch"


def _escaped(value: str) -> str:
    return value.replace(":", "%3A")


def _number(value: Any) -> int | str | None:
    text = str(value) if value is not None else ""
    return int(text) if text.isdigit() else (text or None)


def _audience(audience: str | None) -> str | None:
    if audience is None or audience == "":
        return None
    if len(audience) > MAX_AUDIENCE_CHARS or not audience.isprintable():
        raise Invalid(f"audience is 1 to {MAX_AUDIENCE_CHARS} printable characters.")
    return audience


def _compact(part: dict[str, Any]) -> bytes:
    return json.dumps(part, separators=(",", ":"), sort_keys=True).encode()
