"""The image's npm registry and pip index (images/ubuntu/registry_settings.py, run by images/ubuntu/build.sh): every
job reads them and the image is pushed to ECR, so a URL with a user name or token never gets into it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[3] / "images" / "ubuntu"
_SPEC = importlib.util.spec_from_file_location("registry_settings", HERE / "registry_settings.py")
assert _SPEC and _SPEC.loader
registry_settings = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(registry_settings)

PLAIN = {"CONVEYOR_NPM_REGISTRY": "https://npm.example/", "CONVEYOR_PIP_INDEX": "https://pypi.example/simple"}


def test_plain_registry_urls_are_written_into_the_image(tmp_path: Path) -> None:
    registry_settings.write(tmp_path, PLAIN)

    assert (tmp_path / "etc" / "pip.conf").read_text() == "[global]\nindex-url = https://pypi.example/simple\n"
    assert (tmp_path / "home" / "appveyor" / ".npmrc").read_text().startswith("registry=https://npm.example/\n")


@pytest.mark.parametrize("variable", ["CONVEYOR_NPM_REGISTRY", "CONVEYOR_PIP_INDEX"])
@pytest.mark.parametrize(
    "url",
    ["https://deploy:s3cr3t-token@artifactory.example/api/pypi/simple", "https://s3cr3t-token@nexus.example/",
     "https://x@y@nexus.example/"],
)  # fmt: skip
def test_a_url_with_credentials_is_refused_without_repeating_them(tmp_path: Path, variable: str, url: str) -> None:
    environment = {**PLAIN, variable: url}

    with pytest.raises(registry_settings.Refused) as refused:
        registry_settings.write(tmp_path, environment)

    assert "credential-free mirror URL" in str(refused.value) and variable in str(refused.value)
    assert "s3cr3t" not in str(refused.value)
    assert not (tmp_path / "etc" / "pip.conf").exists()


@pytest.mark.parametrize(
    "url", ["https://pypi.example/simple\nextra-index-url = http://evil.example/", "ftp://pypi.example/", "' ; id #"]
)
def test_a_url_that_is_not_one_plain_http_url_is_refused(url: str) -> None:
    with pytest.raises(registry_settings.Refused):
        registry_settings.checked("CONVEYOR_PIP_INDEX", url)


def build_sh_lines(tmp_path: Path, pip_conf: str) -> subprocess.CompletedProcess[str]:
    """build.sh's lines from its first line to its check of the registries, with a pip config of the test's own."""
    script = (HERE / "build.sh").read_text().split("\nmmdebstrap ")[0].split("\n# dpkg writes")[0]
    (tmp_path / ".config" / "pip").mkdir(parents=True)
    (tmp_path / ".config" / "pip" / "pip.conf").write_text(pip_conf)  # this machine's user's, as pip config reads
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CONVEYOR_NPM_REGISTRY": "https://npm.example/"}
    return subprocess.run(
        ["sh", "-c", script, str(HERE / "build.sh"), str(tmp_path / "image")],
        env=environment, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip


def test_build_sh_stops_before_building_when_this_machines_pip_index_carries_a_token(tmp_path: Path) -> None:
    done = build_sh_lines(tmp_path, "[global]\nindex-url = https://ci:s3cr3t@artifactory.example/simple\n")

    assert done.returncode == 2
    assert "credential-free mirror URL" in done.stderr and "s3cr3t" not in done.stderr


def test_build_sh_goes_on_with_a_plain_pip_index(tmp_path: Path) -> None:
    assert build_sh_lines(tmp_path, "[global]\nindex-url = https://pypi.example/simple\n").returncode == 0


def test_the_build_hook_writes_the_settings_as_given_whatever_quotes_they_hold(tmp_path: Path) -> None:
    hook = f"python3 '{HERE}/registry_settings.py' \"$1\""
    environment = {**os.environ, **PLAIN, "CONVEYOR_PIP_INDEX": "https://pypi.example/simple?a='b'&c=$(id)"}

    subprocess.run(["sh", "-c", hook, "sh", str(tmp_path)], env=environment, check=True, timeout=60)

    assert "index-url = https://pypi.example/simple?a='b'&c=$(id)\n" in (tmp_path / "etc" / "pip.conf").read_text()
    assert sys.executable  # the hook runs the machine's python3, as mmdebstrap does


def test_only_certificates_of_this_machine_go_into_the_image_not_keys_or_links_beside_them(tmp_path: Path) -> None:
    """build.sh's hook that copies this machine's certificate authorities, run on a folder of the test's own."""
    hook = next(
        line for line in (HERE / "build.sh").read_text().splitlines() if 'chroot "$1" update-ca-certificates' in line
    )
    command = hook.split("--customize-hook='", 1)[1].rsplit("' \\", 1)[0]
    source = tmp_path / "ca-certificates"
    (source / "corp").mkdir(parents=True)
    (source / "corp" / "proxy.crt").write_text("certificate")
    (source / "proxy.key").write_text("private key")
    (tmp_path / "secret").write_text("private")
    (source / "secret.crt").symlink_to(tmp_path / "secret")
    image = tmp_path / "image"
    (image / "usr" / "local" / "share" / "ca-certificates").mkdir(parents=True)
    command = command.replace(" /usr/local/share/ca-certificates", f" {source}")  # this machine's, not the image's
    command = command.replace('chroot "$1" update-ca-certificates', "true")  # the image's own step, not under test

    subprocess.run(["sh", "-c", command, "sh", str(image)], check=True, timeout=60)

    copied = image / "usr" / "local" / "share" / "ca-certificates"
    assert sorted(str(path.relative_to(copied)) for path in copied.rglob("*") if not path.is_dir()) == [
        "corp/proxy.crt"
    ]
