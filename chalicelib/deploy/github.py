"""The GitHub provider (AppVeyor's "GitHub Releases"): a release of the repository for the tag, and the selected
artifacts uploaded as its assets.

The release is created; one that exists already fails the deployment unless ``force_update`` is set, which updates
it and replaces its assets of the same names. The token goes only to GitHub's API and to its uploads host.
"""

from __future__ import annotations

import json
import mimetypes
import posixpath
import re
from typing import Any
from urllib.parse import quote, urlsplit

from chalicelib.config import forge_api_url, repository_base_url
from chalicelib.deploy import transfers
from chalicelib.deploy.base import Delivery, DeployArtifact, DeployFailed, open_artifact, selected
from chalicelib.outbound import shown

PUBLIC_HOST = "https://github.com"
PUBLIC_API = "https://api.github.com"
API_VERSION = "2022-11-28"
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_HINTS = {
    401: " The auth_token was refused.",
    403: " The auth_token may not write the repository's releases (it needs the repo or public_repo scope).",
    404: " The repository is not found with the auth_token.",
}


def deliver(delivery: Delivery) -> None:
    """Create (or, with force_update, update) the release and upload the selected artifacts to it."""
    token = delivery.setting("auth_token")
    if not token:
        raise DeployFailed("The GitHub provider needs the auth_token setting: a token that may write releases.")
    repository = _repository(delivery)
    tag = delivery.setting("tag") or _default_tag(delivery.variables)
    if "$(" in tag:  # $(NAME) of a variable the deployment lacks stays as written
        raise DeployFailed(f"The tag {tag!r} names a variable this deployment does not have.")
    artifacts = selected(delivery.artifacts, delivery.setting("artifact"))
    names = _asset_names(artifacts)
    releases = Releases(api_url(), repository, token)
    delivery.stop_if_asked()
    release = releases.find(tag)
    if release is not None and not delivery.flag("force_update"):
        raise DeployFailed(
            f"The release {tag} already exists in {repository}: set force_update to update it and replace its assets."
        )
    fields: dict[str, Any] = {
        "name": delivery.setting("release") or tag,
        "draft": delivery.flag("draft"),
        "prerelease": delivery.flag("prerelease"),
    }
    if description := delivery.setting("description"):
        fields["body"] = description  # GitHub takes a release without one (AppVeyor's provider failed with 422)
    if release is None:
        commit = delivery.variables.get("APPVEYOR_REPO_COMMIT") or (delivery.context.get("commit") or {}).get(
            "commitId"
        )
        target = {"target_commitish": commit} if commit else {}  # where GitHub makes the tag if it does not exist
        try:
            release = releases.create({"tag_name": tag, **fields, **target})
            delivery.log(f"Created the release {fields['name']} ({tag}) in {repository}")
        except DeployFailed:  # another job of the build (a matrix deploys from each) may have made it meanwhile
            made = releases.find(tag)
            if made is None or not delivery.flag("force_update"):
                raise
            release = releases.update(made, fields)
            delivery.log(f"Updated the release {fields['name']} ({tag}) in {repository}, made meanwhile")
    else:
        release = releases.update(release, fields)
        delivery.log(f"Updated the release {fields['name']} ({tag}) in {repository}")
    if not artifacts:
        delivery.log("The build has no artifacts: the release has no assets to upload.")
    existing = {asset.get("name"): asset.get("id") for asset in release.get("assets") or []}
    upload_url = releases.upload_url(release)
    for artifact, name in zip(artifacts, names, strict=True):
        delivery.stop_if_asked()
        if name in existing:
            releases.delete_asset(existing[name], name)
        releases.upload(upload_url, name, artifact, delivery)
        replaced = " (replacing the asset of that name)" if name in existing else ""
        delivery.log(f"Uploaded {artifact.file_name} as {name}{replaced} ({artifact.size} bytes)")


def api_url() -> str:
    """GitHub's REST API, as commit statuses reach it: CONVEYOR_GITHUB_API_URL, else api.github.com, else GitHub
    Enterprise's /api/v3 on CONVEYOR_GITHUB_URL."""
    if configured := forge_api_url("gitHub"):
        return configured
    base = repository_base_url("gitHub", PUBLIC_HOST)
    return PUBLIC_API if base == PUBLIC_HOST else f"{base}/api/v3"


class Releases:
    """One repository's releases through GitHub's REST API, with one token; every failure is DeployFailed."""

    def __init__(self, api: str, repository: str, token: str) -> None:
        self.api = api.rstrip("/")
        self.repository = repository
        self.token = token

    def find(self, tag: str) -> dict[str, Any] | None:
        """The release of ``tag``; a draft one too (GitHub finds drafts by tag only in the list), else None."""
        found = self._json("GET", f"/releases/tags/{quote(tag, safe='')}", "Reading the release", absent_ok=True)
        if found is not None:
            return found
        listed = self._json("GET", "/releases?per_page=100", "Listing the releases") or []
        return next((entry for entry in listed if entry.get("draft") and entry.get("tag_name") == tag), None)

    def create(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A new release."""
        return self._json("POST", "/releases", f"Creating the release {fields['tag_name']}", fields) or {}

    def update(self, release: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
        """The release with ``fields`` changed."""
        what = f"Updating the release {release.get('tag_name')}"
        return self._json("PATCH", f"/releases/{int(release['id'])}", what, fields) or {}

    def delete_asset(self, asset_id: Any, name: str) -> None:
        """Remove an asset the upload replaces."""
        self._json("DELETE", f"/releases/assets/{int(asset_id)}", f"Deleting the old asset {name}", absent_ok=True)

    def upload_url(self, release: dict[str, Any]) -> str:
        """Where the release takes assets: GitHub names it, and only its API's host or uploads host gets the token."""
        url = str(release.get("upload_url") or "").split("{", 1)[0]
        target, api = urlsplit(url), urlsplit(self.api)
        hosts = {api.hostname}
        if api.hostname and api.hostname.startswith("api."):
            hosts.add(f"uploads.{api.hostname.removeprefix('api.')}")
        if not url:
            raise DeployFailed(f"GitHub's answer named no upload URL for the release in {self.repository}.")
        if (target.scheme, target.port) != (api.scheme, api.port) or target.hostname not in hosts:
            raise DeployFailed(
                f"GitHub named {shown(url)} as the release's upload URL, which is neither its API's host nor its "
                "uploads host: the auth_token is not sent there."
            )
        return url

    def upload(self, upload_url: str, name: str, artifact: DeployArtifact, delivery: Delivery) -> None:
        """Stream one artifact from the data bucket as the asset ``name``."""
        headers = self._headers()
        headers["Content-Type"] = mimetypes.guess_type(name)[0] or "application/octet-stream"
        with open_artifact(artifact) as stream:
            body = transfers.StreamedBody([stream], artifact.size, delivery.stop_if_asked)
            response = transfers.upload(
                "POST", f"{upload_url}?name={quote(name)}", "GitHub", headers=headers, body=body
            )
        with response:
            if response.status_code != 201:
                raise DeployFailed(self._refusal(f"Uploading {artifact.file_name} as {name}", response))

    def _json(
        self, method: str, path: str, what: str, body: dict[str, Any] | None = None, absent_ok: bool = False
    ) -> Any:
        url = f"{self.api}/repos/{self.repository}{path}"
        data = None if body is None else json.dumps(body).encode()
        headers = self._headers() | ({"Content-Type": "application/json"} if body is not None else {})
        with transfers.call(method, url, "GitHub", headers=headers, data=data) as response:
            if response.status_code == 204 or (absent_ok and response.status_code == 404):
                return None
            if not 200 <= response.status_code < 300:
                raise DeployFailed(self._refusal(what, response))
            return transfers.json_of(response)

    def _headers(self) -> dict[str, str]:
        return {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "Conveyor",
            "Authorization": f"Bearer {self.token}",
        }

    def _refusal(self, what: str, response: Any) -> str:
        """Why GitHub refused, in its own words (message, and each error's code), quoting no token."""
        answer = transfers.json_of(response)
        said = ""
        if isinstance(answer, dict) and answer.get("message"):
            codes = [str(error.get("code")) for error in answer.get("errors") or [] if isinstance(error, dict)]
            said = f": {str(answer['message'])[:200]}" + (f" ({', '.join(codes)})" if codes else "")
        message = f"{what} in {self.repository} failed: GitHub answered {response.status_code}{said}."
        message += _HINTS.get(response.status_code, "")
        return message.replace(self.token, "***")


def _repository(delivery: Delivery) -> str:
    """The repository setting, else the project's own when it is on GitHub."""
    repository = delivery.setting("repository").removesuffix(".git")
    variables = delivery.variables
    if not repository and variables.get("APPVEYOR_REPO_PROVIDER", "").lower() == "github":
        repository = variables.get("APPVEYOR_REPO_NAME", "")
    if not repository:
        raise DeployFailed(
            "The GitHub provider needs the repository setting (owner/repo): the project is not on GitHub."
        )
    if not _REPOSITORY.match(repository) or ".." in repository:
        raise DeployFailed(f"The repository setting is owner/repo, not {repository!r}.")
    return repository


def _default_tag(variables: dict[str, str]) -> str:
    """The build's tag when it built one, else its version (AppVeyor's default)."""
    if variables.get("APPVEYOR_REPO_TAG", "").lower() == "true" and variables.get("APPVEYOR_REPO_TAG_NAME"):
        return variables["APPVEYOR_REPO_TAG_NAME"]
    version = variables.get("APPVEYOR_BUILD_VERSION", "")
    if not version:
        raise DeployFailed("The GitHub provider needs the tag setting: the build has neither a tag nor a version.")
    return version


def _asset_names(artifacts: list[DeployArtifact]) -> list[str]:
    """Each artifact's asset name, its file's base name; two of the same name would replace each other."""
    names = [posixpath.basename(artifact.file_name) for artifact in artifacts]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise DeployFailed(
            f"Several artifacts would be the release asset {', '.join(twice)}: choose one with the artifact setting."
        )
    return names
