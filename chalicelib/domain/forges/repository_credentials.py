"""A private repository's clone credentials: AppVeyor's ``repositoryAuthentication`` fields, kept out of sight.

A user name and a password (a personal access token, usually) are sent in ``repositoryUsername`` and
``repositoryPassword``: the password is encrypted for this project's ``repositoryPassword`` field and never shown
again. A clone URL that carries ``user:password@`` is refused (every member reads the repository name), and one
stored before that rule is used as it is until ``conveyor migrate`` moves its credentials into these fields;
meanwhile no response shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from chalicelib.core.projects import Project
from chalicelib.core.repository_names import public_repository_name, without_credentials
from chalicelib.domain.forges.repositories import clone_url
from chalicelib.domain.shared import secrets
from chalicelib.domain.shared.validation import MAX_TEXT_LENGTH, invalid
from chalicelib.protocol.logstream import MIN_SECRET_CHARS  # the log masks no shorter value
from chalicelib.scm import forges

CREDENTIALS = "credentials"
SSH = "ssh"
PASSWORD_FIELD = "repositoryPassword"  # the secrets field the password's token is bound to
SSH_KEY_FIELD = "sshPrivateKey"  # the secrets field the deploy key's private half is bound to


@dataclass(frozen=True)
class CredentialsChange:
    """What a request says of the credentials: None keeps each; ``authentication`` "" (or null) removes them."""

    authentication: str | None = None
    username: str | None = None
    password: str | None = None


NO_CREDENTIALS = CredentialsChange()  # a request that says nothing of them: keep what is stored


@dataclass(frozen=True)
class CloneSource:
    """Where a repository is fetched from, and as whom (both None for a public repository)."""

    url: str
    username: str | None
    password: str | None
    ssh_key: str | None = None  # the deploy key's private half (OpenSSH form), for an ssh:// URL
    ssh_host_key: str | None = None  # the host key the server must show (None: not known yet, or published)

    @property
    def credentials(self) -> tuple[str, str] | None:
        """User name and password for the fetch; None for a public repository."""
        if self.username is None and self.password is None:
            return None
        return self.username or "", self.password or ""


def with_credentials(project: Project, change: CredentialsChange, before: Project | None = None) -> Project:
    """The project with the credentials a request set, checked, the password encrypted; 400 naming the field.

    ``before``: the project as stored, when its repository may have moved. A stored password goes only where it was
    set: one who may update the settings, but never saw it, would otherwise point the project at their own host.
    """
    authentication = project.repository_authentication if change.authentication is None else change.authentication
    if not authentication:  # the deploy key stays for a later "ssh"; the host key is learnt again (a rotated one)
        return replace(
            project,
            repository_authentication=None,
            repository_username=None,
            repository_password=None,
            ssh_host_key=None,
        )
    if authentication == SSH:
        return _with_deploy_key(project, before)
    if authentication != CREDENTIALS:
        raise invalid("repositoryAuthentication", "repositoryAuthentication must be 'credentials', 'ssh' or null.")
    if not clone_url(project.repository_type, project.repository_name).startswith(("https://", "http://")):
        raise invalid("repositoryAuthentication", "Credentials need an http(s) clone URL.")
    username = project.repository_username if change.username is None else change.username
    username = username or forges.of(project.repository_type).token_username  # a token alone, as the forge takes it
    if not username or len(username) > MAX_TEXT_LENGTH or not username.isprintable():
        raise invalid("repositoryUsername", f"repositoryUsername must be 1 to {MAX_TEXT_LENGTH} printable characters.")
    password = project.repository_password
    if password and not change.password and before is not None and _repository(before) != _repository(project):
        raise invalid(
            PASSWORD_FIELD,
            "The repository changed: send repositoryPassword again (the stored one goes only to the repository it "
            "was set for, which it clones and posts commit statuses to).",
        )
    if change.password == "":
        password = None  # "" removes the stored one: credentials need another, or repositoryAuthentication null
    elif change.password is not None:
        password = secrets.encrypt(secrets.project_owner(project), PASSWORD_FIELD, _valid_password(change.password))
    if not password:
        raise invalid(
            PASSWORD_FIELD,
            "repositoryPassword is required with 'credentials' authentication (repositoryAuthentication null "
            "removes the credentials).",
        )
    return replace(
        project, repository_authentication=CREDENTIALS, repository_username=username, repository_password=password
    )


def _valid_password(password: str) -> str:
    """A new password, within what KMS encrypts and long enough for the build log to mask it."""
    if len(password.strip()) < MIN_SECRET_CHARS or len(password.encode()) > secrets.MAX_SECRET_BYTES:
        raise invalid(
            PASSWORD_FIELD,
            f"repositoryPassword must be {MIN_SECRET_CHARS} characters (surrounding spaces aside) to "
            f"{secrets.MAX_SECRET_BYTES} bytes long: a shorter one could not be masked in build logs.",
        )
    return password


def _with_deploy_key(project: Project, before: Project | None) -> Project:
    """The project fetched over SSH with a deploy key of its own, made the first time (the public half is shown, to
    add to the repository's deploy keys); the server's host key is learnt again when the repository moves."""
    if not forges.of(project.repository_type).deploy_keys or not _fetch_url(project, SSH).startswith("ssh://"):
        raise invalid(
            "repositoryAuthentication", "'ssh' needs an ssh:// repositoryName (or a gitHub, gitLab or bitBucket one)."
        )
    after = replace(project, repository_authentication=SSH, repository_username=None, repository_password=None)
    if before is not None and _origin(before) != _origin(after):
        after = replace(after, ssh_host_key=None)
    if after.ssh_private_key:
        return after
    from chalicelib.scm.ssh import new_deploy_key  # paramiko and cryptography load only here: cold start

    key = new_deploy_key(f"conveyor {project.account_name}/{project.name}")
    token = secrets.encrypt(secrets.project_owner(project), SSH_KEY_FIELD, key.private_key)
    return replace(after, ssh_public_key=key.public_key, ssh_private_key=token)


def _fetch_url(project: Project, authentication: str | None) -> str:
    url = clone_url(project.repository_type, project.repository_name, ssh=authentication == SSH)
    return without_credentials(url)[0]


def _repository(project: Project) -> tuple[str, str, str]:
    """Which repository a project's credentials were given for: where it is, and its name there."""
    return *_origin(project), public_repository_name(project).lower().rstrip("/").removesuffix(".git")


def _origin(project: Project) -> tuple[str, str]:
    parts = urlsplit(_fetch_url(project, project.repository_authentication))
    return parts.scheme, (parts.hostname or "").lower() + f":{parts.port or ''}"


def clone_source(project: Project) -> CloneSource:
    """Where and as whom the service and the project's runners fetch its repository (the secrets decrypted)."""
    if project.repository_authentication == SSH and project.ssh_private_key:
        key = secrets.decrypt(secrets.project_owner(project), SSH_KEY_FIELD, project.ssh_private_key)
        return CloneSource(_fetch_url(project, SSH), None, None, ssh_key=key, ssh_host_key=project.ssh_host_key)
    url, username, password = without_credentials(clone_url(project.repository_type, project.repository_name))
    if project.repository_authentication == CREDENTIALS and project.repository_password:
        owner = secrets.project_owner(project)
        username = project.repository_username
        password = secrets.decrypt(owner, PASSWORD_FIELD, project.repository_password)
    return CloneSource(url, username, password)


def status_token(project: Project) -> tuple[str | None, str] | None:
    """The user name and token commit statuses are posted with: the project's repository credential, if any."""
    if project.repository_authentication != CREDENTIALS or not project.repository_password:
        return None
    token = secrets.decrypt(secrets.project_owner(project), PASSWORD_FIELD, project.repository_password)
    return project.repository_username, token


def migrated(project: Project) -> Project | None:
    """The project with the user and password its repository name carries moved into its credentials fields (or
    just dropped, when those are set already); None when there is nothing to move."""
    name, username, password = without_credentials(project.repository_name)
    if name == project.repository_name:
        return None
    moved = replace(project, repository_name=name)
    if project.repository_password:
        return moved  # the fields were set since: the URL's are stale
    if not (username and password):
        return None  # a user name alone (a token as user) or a password alone fit no fields: kept, never shown
    token = secrets.encrypt(secrets.project_owner(moved), PASSWORD_FIELD, password)
    return replace(
        moved, repository_authentication=CREDENTIALS, repository_username=username, repository_password=token
    )
