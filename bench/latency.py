"""Latency of the local stack for keep-alive clients, against a bare Chalice route doing the same DynamoDB calls.

``conveyor local`` (what ``make run`` serves) answers ``GET /api/projects/{account}/{slug}`` for a project with no
builds yet: a warm key lookup, then a GetItem of the project and a Query for its newest build. A bare Chalice app
of one route makes the same two calls with boto3 against the same emulator, served by ``chalice local`` with and
without TCP_NODELAY. Each is read 200 times over one kept-alive connection (as every AppVeyor client does) and
200 times with a new connection each.
"""

from __future__ import annotations

import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench import Figure, Section

READS = 200
TARGET_RATIO = 1.5

_BARE_APP = """
import boto3
from chalice import Chalice

app = Chalice(app_name="bare")
dynamodb = boto3.client("dynamodb")


@app.route("/api/projects/{account_id}/{slug}")
def project(account_id, slug):
    dynamodb.get_item(TableName="{prefix}projects", Key={"account_id": {"N": account_id}, "slug": {"S": slug}})
    dynamodb.query(TableName="{prefix}builds", KeyConditionExpression="project_id = :p",
                   ExpressionAttributeValues={":p": {"N": "{project_id}"}}, ScanIndexForward=False, Limit=1)
    return {"ok": True}
"""

_SERVE_BARE = """
import sys
from chalice.cli.factory import CLIFactory
from chalice.local import ChaliceRequestHandler, LocalDevServer

class Handler(ChaliceRequestHandler):
    disable_nagle_algorithm = sys.argv[3] == "nodelay"

config = CLIFactory(sys.argv[1]).create_config_obj(chalice_stage_name="dev")
LocalDevServer(config.chalice_app, config, "127.0.0.1", int(sys.argv[2]), handler_cls=Handler).serve_forever()
"""


def run() -> Section:
    from chalicelib.local.emulator import REGION
    from tests.e2e.test_local_stack import LocalStack, child_environment, free_ports

    section = Section("Latency of the local stack", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    # The stack's emulator answers only requests signed with the stack's credentials: the bare app gets the same.
    credentials = {
        "AWS_ACCESS_KEY_ID": "BENCH" + secrets.token_hex(8).upper(),
        "AWS_SECRET_ACCESS_KEY": secrets.token_urlsafe(30),
    }
    with tempfile.TemporaryDirectory() as root:
        stack = LocalStack.start(Path(root) / "stack", **credentials).wait_until_ready()
        bare_servers: list[subprocess.Popen[bytes]] = []
        try:
            api = requests.Session()
            api.headers["Authorization"] = f"Bearer {stack.key}"
            project = api.post(
                f"{stack.base_url}/api/projects",
                json={"repositoryProvider": "gitHub", "repositoryName": "octo/latency"},
            ).json()
            path = f"/api/projects/{project['accountName']}/{project['slug']}"
            stack_keep = _reads(api, stack.base_url + path)
            stack_new = _reads(None, stack.base_url + path, stack.key)

            bare = {}
            for mode, port in zip(("nodelay", "nagle"), free_ports(2), strict=True):
                app_dir = _bare_app(Path(root) / mode, project["projectId"])
                environment = child_environment(
                    AWS_ENDPOINT_URL=stack.aws_endpoint, AWS_DEFAULT_REGION=REGION, **credentials
                )
                bare_servers.append(
                    subprocess.Popen(
                        [sys.executable, "-c", _SERVE_BARE, str(app_dir), str(port), mode],
                        env=environment,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                url = f"http://127.0.0.1:{port}/api/projects/{project['accountId']}/{project['slug']}"
                _wait(url)
                bare[mode] = (_reads(requests.Session(), url), _reads(None, url))
        finally:
            for server in bare_servers:
                server.terminate()
            stack.stop()
    ratio = stack_keep / bare["nodelay"][0]
    section.figures += [
        Figure("make run, kept-alive connection (median)", f"{stack_keep:.1f} ms"),
        Figure("make run, new connection each (median)", f"{stack_new:.1f} ms"),
        Figure("bare route with TCP_NODELAY, kept-alive (median)", f"{bare['nodelay'][0]:.1f} ms"),
        Figure("bare route with TCP_NODELAY, new connection each (median)", f"{bare['nodelay'][1]:.1f} ms"),
        Figure("bare route as chalice local serves it, kept-alive (median)", f"{bare['nagle'][0]:.1f} ms"),
        Figure("bare route as chalice local serves it, new connection each (median)", f"{bare['nagle'][1]:.1f} ms"),
        Figure("make run / bare route, kept-alive", f"{ratio:.2f}x", f"≤ {TARGET_RATIO}x", ratio <= TARGET_RATIO),
    ]
    return section


def _reads(session: requests.Session | None, url: str, key: str | None = None) -> float:
    """The median milliseconds of a read, over one session (kept alive) or a new connection each."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    times = []
    for _ in range(READS):
        started = time.perf_counter()
        reply = session.get(url) if session is not None else requests.get(url, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        reply.raise_for_status()
    return statistics.median(times)


def _bare_app(directory: Path, project_id: int) -> Path:
    from chalicelib.config import settings

    (directory / ".chalice").mkdir(parents=True)
    code = _BARE_APP.replace("{prefix}", settings().table_prefix).replace("{project_id}", str(project_id))
    (directory / "app.py").write_text(code)
    (directory / ".chalice" / "config.json").write_text('{"version": "2.0", "app_name": "bare", "stages": {"dev": {}}}')
    return directory


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.2)
    raise RuntimeError(f"the bare app did not answer at {url}")
