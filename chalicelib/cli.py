"""The operator command, ``conveyor``: the local stack, and accounts and keys on any stage.

It talks to whatever AWS endpoint the standard AWS environment names (AWS_ENDPOINT_URL, region,
credentials) and to the tables of the stage given by ``--stage``, as ``.chalice/config.json`` names them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from chalicelib.agent import Agent, AgentError, BuildJobAgent
from chalicelib.errors import ConveyorError
from chalicelib.runner.sandbox import SandboxUnavailable

AGENT_KEY_VARIABLE = "CONVEYOR_AGENT_KEY"
# the stack's folder (chalicelib.local.stack's), known without loading the stack: a command that needs no stack
# (conveyor exec, an agent) starts without moto and Chalice's command line
PROJECT_DIR = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conveyor", description=__doc__.splitlines()[0])
    parser.add_argument("--stage", default="local", help="the Chalice stage whose tables to use (default: local)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("local", help="serve the whole service locally (API, queues, workers, AWS emulator)")
    account = commands.add_parser("create-account", help="a new account with its owner; prints the owner's key")
    account.add_argument("--name", required=True)
    account.add_argument("--admin-email", required=True)
    account.add_argument("--api-key", help="use this key instead of a new random one")
    key = commands.add_parser("create-api-key", help="a new key for a user of an account; prints it")
    key.add_argument("--account", required=True)
    key.add_argument("--email", required=True)
    key.add_argument("--api-key", help="use this key (a 'v2.' key is user-level) instead of a new random one")
    commands.add_parser("migrate", help="bring stored data up to this version (after an upgrade; run it twice freely)")
    images = commands.add_parser("images", help="Conveyor's build images (docs/executors.md)")
    push = images.add_subparsers(dest="images_command", required=True).add_parser(
        "push", help="push the local image (make image) to an ECR repository, where AWS CodeBuild runs it"
    )
    push.add_argument("repository", help="the stage's image repository (its CONVEYOR_IMAGE_REPOSITORY)")
    push.add_argument(
        "--root", default=str(PROJECT_DIR / ".images" / "ubuntu"), help="the image (default: .images/ubuntu)"
    )
    agent = commands.add_parser(
        "agent",
        help="a deployment agent of an Agent environment (runs where it deploys), or with --builds a build agent",
    )
    agent.add_argument("--url", required=True, help="the service's base URL, e.g. http://127.0.0.1:8000")
    agent.add_argument(
        "--key",
        help="the environment's access key, or with --builds the agent's key (better: CONVEYOR_AGENT_KEY; on "
        "Windows only that)",
    )
    agent.add_argument(
        "--builds", action="store_true", help="run build jobs (a build agent's key: POST /api/build-agents)"
    )
    agent.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="with --builds, where no sandbox can be made: only trusted builds",
    )
    agent.add_argument(
        "--projects",
        help=r"with --builds on Windows: build folders go below it, as AppVeyor's C:\projects (default: the job's own)",
    )
    agent.add_argument("--folder", default="deployments", help="where artifacts go (default: ./deployments)")
    agent.add_argument("--name", help="this machine's name in deployments (default: the host name)")
    agent.add_argument("--once", action="store_true", help="run at most one job, then exit")
    add_exec_arguments(
        commands.add_parser("exec", help="run this checkout's appveyor.yml here, each job as a build runs it")
    )
    args = parser.parse_args(argv)
    if args.command == "exec":
        from chalicelib.local.exec.command import run_exec

        return run_exec(args)

    try:
        run(args)
    except ConveyorError as error:
        print(f"conveyor: {error.message}", file=sys.stderr)
        return 1
    except (AgentError, SandboxUnavailable, OSError) as error:
        print(f"conveyor: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        if not isinstance(error, _service_errors()):
            raise
        print(f"conveyor: {error}", file=sys.stderr)
        return 1
    return 0


def add_exec_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``conveyor exec`` (docs/exec.md)."""
    parser.add_argument("--config", help="the configuration file (default: appveyor.yml, else .appveyor.yml)")
    parser.add_argument("--job", help="run only the jobs whose name contains this text (see --list)")
    parser.add_argument("--list", action="store_true", help="print the jobs and exit")
    parser.add_argument(
        "-e", dest="variables", action="append", default=[], metavar="NAME=VALUE", help="set a variable (repeatable)"
    )
    parser.add_argument("--branch", help="the branch the build is of (default: the one checked out)")
    parser.add_argument("--cache", action="store_true", help="use appveyor.yml's cache: (in .conveyor/exec/cache/)")
    parser.add_argument(
        "--untracked", action="store_true", help="build the untracked files git does not ignore too (default: left out)"
    )
    parser.add_argument("--parallel", type=int, default=1, metavar="N", help="run N jobs at once (default: 1)")


def _service_errors() -> tuple[type[Exception], ...]:
    """What the operator commands' AWS and table calls raise; imported only when one failed, so that a build agent,
    which has none of the service's libraries (on Windows), starts without them."""
    from botocore.exceptions import BotoCoreError, ClientError
    from pynamodb.exceptions import PynamoDBException

    return (BotoCoreError, ClientError, PynamoDBException)


def run(args: argparse.Namespace) -> None:
    if args.command == "agent":
        # a key on the command line is in every process listing of the machine: the environment keeps it private
        if args.key and os.name == "nt":  # there any process of the machine reads it, a job's scripts among them
            raise SystemExit(
                f"conveyor: on Windows the agent takes its key from {AGENT_KEY_VARIABLE} only, not --key: every "
                "process of the machine, the jobs' scripts among them, can read a command line (docs/executors.md)."
            )
        key = args.key or os.environ.get(AGENT_KEY_VARIABLE, "")
        if not key:
            alternative = "" if os.name == "nt" else " (or pass --key)"
            raise SystemExit(f"conveyor: the agent needs its key: set {AGENT_KEY_VARIABLE}{alternative}")
    if args.command == "agent" and args.builds:
        os.environ.pop(AGENT_KEY_VARIABLE, None)  # kept by the agent alone: no process it starts inherits it
        BuildJobAgent(args.url, key, args.unsafe_no_sandbox, projects_root=args.projects).run(once=args.once)
        return
    if args.command == "agent":
        deployer = Agent(args.url, key, Path(args.folder))
        if args.name:
            deployer.name = args.name
        deployer.run(once=args.once)
        return
    if args.command == "images":
        from chalicelib.executors.image_push import PushFailed, push

        try:
            pushed = push(args.repository, Path(args.root))
        except PushFailed as error:
            raise SystemExit(f"conveyor: {error}") from error
        print("pushed " + ", ".join(pushed))
        return
    if args.command == "local":
        from chalicelib.local.stack import LocalOptions, run_local

        run_local(LocalOptions.from_environment())
        return
    apply_stage_environment(args.stage)
    if args.command == "migrate":
        from chalicelib.domain.migrations import migrate

        for name, changed in migrate().items():
            print(f"{name}: {changed} changed")
        return
    from chalicelib.domain.team.accounts import create_account, create_api_key

    if args.command == "create-account":
        print(create_account(args.name, args.admin_email, args.api_key))
    else:
        print(create_api_key(args.account, args.email, args.api_key))


def apply_stage_environment(stage: str) -> None:
    """Set the stage's environment variables from .chalice/config.json, as Chalice does for the app."""
    config = json.loads((PROJECT_DIR / ".chalice" / "config.json").read_text())
    if stage not in config.get("stages", {}):
        raise SystemExit(f"conveyor: no stage '{stage}' in .chalice/config.json")
    os.environ.update(config.get("environment_variables", {}))
    os.environ.update(config["stages"][stage].get("environment_variables", {}))
    if stage == "local" and not os.environ.get("AWS_ENDPOINT_URL"):
        from chalicelib.local.persistence import state_folder
        from chalicelib.local.stackfile import use_running_stack

        use_running_stack(state_folder(PROJECT_DIR))  # the stack `make run` started, with its own credentials
    if os.environ.get("AWS_ENDPOINT_URL"):
        from chalicelib.local.emulator import use_fake_credentials

        use_fake_credentials()


if __name__ == "__main__":
    sys.exit(main())
