"""Writes this machine's npm registry and pip index into the image's root filesystem ($1): ``~appveyor/.npmrc`` and
``/etc/pip.conf``, so that a job's ``npm install`` and ``pip install`` ask what this machine asks
(images/ubuntu/build.sh, docs/executors.md "The local image"). Every job reads these files and the image is pushed
to ECR, so a URL that carries a user name or token (``https://user:token@artifactory.example/...``) is refused,
as is one that is not a plain http(s) URL; ``--check`` only checks, before the long build starts. The URLs come in
the environment (CONVEYOR_NPM_REGISTRY, CONVEYOR_PIP_INDEX), never through a shell's quoting. Standard library only.
"""

import os
import sys
import urllib.parse
from pathlib import Path

_SETTINGS = {"CONVEYOR_NPM_REGISTRY": "npm registry", "CONVEYOR_PIP_INDEX": "pip index"}


class Refused(ValueError):
    """A registry URL the image must not carry; the message says why and what to do, without the URL's secret."""


def checked(variable: str, url: str) -> str:
    """The URL, when it is a plain http(s) URL without credentials; else Refused."""
    what = _SETTINGS[variable]
    if any(character.isspace() or ord(character) < 32 or ord(character) == 127 for character in url):
        raise Refused(f"this machine's {what} is not a URL on one line: set {variable} to the URL the image is to use")
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as error:
        raise Refused(f"this machine's {what} is not a URL ({error}): set {variable}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"this machine's {what} is not an http(s) URL: set {variable} to the URL the image is to use")
    if "@" in parts.netloc:
        raise Refused(
            f"this machine's {what} ({parts.scheme}://{parts.hostname}/...) carries a user name or token: the image "
            f"is read by every job and pushed to ECR, so it must not hold credentials; set {variable} to a "
            "credential-free mirror URL for the image"
        )
    return url


def write(root: Path, environment: dict[str, str]) -> None:
    """Write the image's .npmrc and pip.conf under ``root`` from the checked URLs."""
    npm = checked("CONVEYOR_NPM_REGISTRY", environment["CONVEYOR_NPM_REGISTRY"])
    pip = checked("CONVEYOR_PIP_INDEX", environment["CONVEYOR_PIP_INDEX"])
    (root / "home" / "appveyor").mkdir(parents=True, exist_ok=True)
    (root / "home" / "appveyor" / ".npmrc").write_text(f"registry={npm}\ncafile=/etc/ssl/certs/ca-certificates.crt\n")
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "pip.conf").write_text(f"[global]\nindex-url = {pip}\n")


def main(arguments: list[str], environment: dict[str, str]) -> int:
    """``--check`` or the image's root: 0 when done, 2 (saying why on stderr) when a URL is refused."""
    try:
        if arguments == ["--check"]:
            for variable in _SETTINGS:
                checked(variable, environment.get(variable, ""))
        else:
            write(Path(arguments[0]), environment)
    except Refused as refused:
        print(f"build.sh: {refused}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], dict(os.environ)))
