"""What the service does for Windows build agents, whichever machine they run on: a Windows image's job says osType
Windows, and a Windows agent, which has no sandbox to offer, takes pull request jobs only where it was registered to
take them. (The agent itself, run under Wine: test_windows_agent_under_wine.py.)"""

from __future__ import annotations

from chalicelib.local.pump import SqsPump
from tests.builds import BuildProject, appveyor_yml
from tests.gitserver import GitServer
from tests.support import Account, Caller, unique

WINDOWS = {"sandboxed": False, "platform": "windows"}


def register(account: Account, image: str, pull_requests: bool) -> Caller:
    body = {"name": unique("windows"), "images": [image], "pullRequests": pull_requests}
    reply = account.api.post("/build-agents", body)
    assert reply.status == 200, reply.body
    return Caller(account.client, reply.json["key"])


def test_a_windows_images_job_says_os_type_windows_and_an_ubuntu_job_ubuntu(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    register(account, "Visual Studio 2022", pull_requests=False)
    yml = appveyor_yml("image:", "  - Visual Studio 2022", "  - Ubuntu", "build_script:", "  - cmd: echo hi")
    project = BuildProject(account, git_server, {"appveyor.yml": yml})

    jobs = project.build(project.start()["version"])["jobs"]

    assert sorted(job["osType"] for job in jobs) == ["Ubuntu", "Windows"]


def test_a_windows_agent_takes_pull_request_jobs_only_when_registered_to(
    account: Account, git_server: GitServer, pump: SqsPump
) -> None:
    image = "Visual Studio 2019"
    branches_only = register(account, image, pull_requests=False)
    files = {"appveyor.yml": appveyor_yml(f"image: {image}")}
    project = BuildProject(account, git_server, files)
    head = project.repository.commit({**files, "pr.txt": "from a fork"}, branch="feature")
    project.repository.set_ref("refs/pull/9/head", head)
    takes_pull_requests = register(account, image, pull_requests=True)
    waiting = project.build(project.start(pullRequestId=9)["version"])["jobs"][0]

    assert branches_only.post("/agent/builds/next", WINDOWS).status == 204
    # a Linux agent without a sandbox still takes none: there a job could read its key, and it has a choice
    assert takes_pull_requests.post("/agent/builds/next", {"sandboxed": False}).status == 204
    taken = takes_pull_requests.post("/agent/builds/next", WINDOWS)
    assert taken.status == 200 and taken.json["jobId"] == waiting["jobId"]


def test_registering_an_agent_for_a_windows_image_warns_that_windows_jobs_have_no_sandbox(account: Account) -> None:
    body = {"name": unique("windows"), "images": ["Visual Studio 2022", "gpu box"], "pullRequests": False}
    reply = account.api.post("/build-agents", body)

    assert reply.status == 200, reply.body
    assert reply.json["warning"].startswith("On Windows (Visual Studio 2022) there is no sandbox")
    assert '"pullRequests": true' in reply.json["warning"]
    # what a job reading the agent's key can do, said where the agent is registered
    assert (
        "read its key and claim the jobs of every image it serves, in any project of this account"
        in reply.json["warning"]
    )
