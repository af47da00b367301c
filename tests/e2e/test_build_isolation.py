"""A build is someone else's code: under ``conveyor local`` (as ``make run`` serves it) a build's scripts look for
the stack's secrets everywhere they can reach, and print what they find.

The stack runs with an admin API key and AWS credentials in its environment, each a value no build could guess;
the build scans every /proc/<pid>/environ and cmdline it can read, its own environment and every file under its
home (and the runner's), then prints each hit. Its log must show none of those values, and no CONVEYOR_ variable.

Each test runs twice: with the stack's jobs in the unshare sandbox, and in containers of the local image
(chalicelib/executors/containers.py), where the build scans as root (sudo), as any build there may.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from chalicelib.executors import containers
from chalicelib.runner import sandbox as local
from chalicelib.runner.sandbox import PROJECT_DIR
from tests.e2e.test_local_stack import LocalStack, finished
from tests.gitserver import GitServer, Repository
from tests.support import unique

SANDBOX = local.sandbox()
pytestmark = pytest.mark.skipif(
    isinstance(SANDBOX, str), reason=f"the local executor cannot make a sandbox on this machine: {SANDBOX}"
)
ADMIN_KEY = f"e2e-admin-{uuid.uuid4().hex}"
STACK_SECRETS = {
    "AWS_ACCESS_KEY_ID": f"AKIAE2E{uuid.uuid4().hex[:13].upper()}",
    "AWS_SECRET_ACCESS_KEY": f"e2e-aws-secret-{uuid.uuid4().hex}",
    "AWS_SESSION_TOKEN": f"e2e-aws-session-{uuid.uuid4().hex}",
}

# What the build runs: everything it can read of other processes, of itself and of its homes, printed.
SCAN = """\
import os
from pathlib import Path

build_folder = os.path.realpath(os.environ.get("APPVEYOR_BUILD_FOLDER", "/nonexistent"))
code = os.environ["CODE_DIR"]  # the service's own code, bound read-only where a clone in /tmp puts it: no secrets
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
print("PROCESSES", len(pids))
for pid in pids:
    for part in ("environ", "cmdline"):
        try:
            data = Path(f"/proc/{pid}/{part}").read_bytes()
        except OSError as error:
            print("UNREADABLE", part, pid, error.strerror)
            continue
        for entry in filter(None, data.split(bytes(1))):
            print("FOUND", part, pid, entry.decode(errors="replace"))
for name, value in sorted(os.environ.items()):
    print("FOUND env", name + "=" + value)
for root in sorted({os.environ["HOME"], "/tmp"}):
    for folder, folders, files in os.walk(root):
        if os.path.realpath(folder) == build_folder or (folder + "/").startswith(code + "/"):  # its clone, our code
            folders.clear()
            continue
        for name in files:
            path = os.path.join(folder, name)
            try:
                text = Path(path).read_bytes()[: 1 << 20].decode(errors="replace")
            except OSError as error:
                print("UNREADABLE file", path, error.strerror)
                continue
            print("FOUND file", path)
            for line in text.splitlines():
                print("FOUND line", path, line)
print("SCAN DONE")
"""

# What the build tries next: the AWS emulator the stack keeps its tables in, on a loopback port, with made-up keys;
# from a container also through 10.0.2.2, the address slirp4netns gives the machine that runs the container.
PROBE = """\
import os, urllib.request

for host in os.environ["EMULATOR_HOSTS"].split():
    request = urllib.request.Request(
        "http://" + host + ":" + os.environ["EMULATOR_PORT"] + "/",
        data=b"{}",
        method="POST",
        headers={
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=attacker/20200101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=00",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            print("EMULATOR", host, reply.status, reply.read().decode(errors="replace")[:4000])
    except Exception as error:
        print("EMULATOR", host, "REFUSED", error)
"""


CONTAINERS_REFUSAL = containers.refusal()


@pytest.fixture(
    scope="module",
    params=[
        "sandbox",
        pytest.param(
            "container",
            marks=pytest.mark.skipif(
                CONTAINERS_REFUSAL is not None, reason=f"no container can run here: {CONTAINERS_REFUSAL}"
            ),
        ),
    ],
)
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """``conveyor local`` with an admin key and (recognisable) AWS credentials in its environment, its jobs in the
    sandbox or in containers."""
    where = {"CONVEYOR_CONTAINERS": "auto" if request.param == "container" else "off"}
    local_stack = LocalStack.start(tmp_path_factory.mktemp("stack"), api_key=ADMIN_KEY, **STACK_SECRETS, **where)
    local_stack.executor = request.param
    try:
        local_stack.wait_until_ready()
        if request.param == "container":  # the stack says where its jobs run, once, at its start
            assert "Jobs run in containers of Conveyor's local image" in local_stack.stderr, local_stack.stderr
        yield local_stack
    finally:
        local_stack.stop()


def run_build(
    stack: LocalStack, git_server: GitServer, files: dict[str, str], variables: dict[str, str] | None = None
) -> tuple[dict[str, Any], str]:
    """A project of these files, built once over HTTP; the finished build and its job's log."""
    name = unique("attacker") + ".git"
    Repository.create(git_server.root, name).commit(files)
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {stack.key}"
    added = api.post(
        f"{stack.base_url}/api/projects",
        json={"repositoryProvider": "git", "repositoryName": git_server.url_of(name)},
        timeout=60,
    )
    assert added.status_code == 200, added.text
    slug = added.json()["slug"]
    started = api.post(
        f"{stack.base_url}/api/builds",
        json={"accountName": "local", "projectSlug": slug, "environmentVariables": variables or {}},
        timeout=30,
    )
    assert started.status_code == 200, started.text
    build = finished(stack, f"/api/projects/local/{slug}/build/{started.json()['version']}", "build", seconds=120)
    log = stack.get(f"/api/buildjobs/{build['jobs'][0]['jobId']}/log", stack.key)
    assert log.status_code == 200, log.text
    return build, log.text


def test_a_build_scanning_every_process_and_file_it_can_read_finds_none_of_the_stacks_secrets(
    stack: LocalStack, git_server: GitServer
) -> None:
    assert stack.key == ADMIN_KEY

    as_root = "sudo --preserve-env " if stack.executor == "container" else ""  # a container's build may sudo
    files = {"scan.py": SCAN, "appveyor.yml": f"build_script:\n  - {as_root}python3 scan.py\n"}
    build, log = run_build(stack, git_server, files, {"CODE_DIR": str(PROJECT_DIR)})

    assert build["status"] == "success", (build, log, stack.stderr)
    assert "SCAN DONE" in log, log  # the scan ran to its end
    processes = [int(line.split()[1]) for line in log.splitlines() if line.startswith("PROCESSES ")]
    assert len(processes) == 1 and 1 <= processes[0] <= 8, log  # the sandbox's own few, not the machine's
    assert "FOUND env HOME=" in log and "FOUND cmdline" in log  # it did read what it could
    found = [line for line in log.splitlines() if line.startswith("FOUND ")]
    for name, value in {"admin API key": ADMIN_KEY, **STACK_SECRETS}.items():
        assert value not in log, f"the build found the stack's {name}: {[line for line in found if value in line]}"
    assert [line for line in found if "CONVEYOR_" in line] == []
    assert "CONVEYOR_" not in log


def test_a_build_cannot_read_the_stacks_tables_through_the_aws_emulator(
    stack: LocalStack, git_server: GitServer
) -> None:
    hosts = ["127.0.0.1", "10.0.2.2"] if stack.executor == "container" else ["127.0.0.1"]
    build, log = run_build(
        stack,
        git_server,
        {"probe.py": PROBE, "appveyor.yml": "build_script:\n  - python3 probe.py\n"},
        # make run's port is 5000; a build could as well try every port
        {"EMULATOR_PORT": str(stack.emulator_port), "EMULATOR_HOSTS": " ".join(hosts)},
    )

    assert build["status"] == "success", (build, log, stack.stderr)
    answer = [line for line in log.splitlines() if line.startswith("EMULATOR ")]
    assert [line.split()[1] for line in answer] == hosts, log
    assert [line for line in answer if "conveyor-local-" in line] == [], (
        f"the build listed the stack's tables: {answer}"
    )


def test_stack_secrets_were_in_the_stacks_environment_so_the_scan_could_have_found_them(stack: LocalStack) -> None:
    environ = Path(f"/proc/{stack.process.pid}/environ").read_bytes().split(b"\0")

    for name, value in STACK_SECRETS.items():
        assert f"{name}={value}".encode() in environ
    assert f"CONVEYOR_API_KEY={ADMIN_KEY}".encode() in environ
