"""``conveyor local``: the whole service on this machine, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalice.cli.factory import CLIFactory
from chalice.local import ChaliceRequestHandler, LocalDevServer, ThreadedHTTPServer

from chalicelib import executors
from chalicelib.config import settings
from chalicelib.domain.execution import lost_jobs
from chalicelib.domain.migrations import migrate
from chalicelib.domain.team.accounts import ensure_account
from chalicelib.local.emulator import Emulator, use_fake_credentials
from chalicelib.local.persistence import NO_STATE, KeptState, state_folder
from chalicelib.local.pump import DEFAULT_MAX_CONCURRENCY, SqsPump
from chalicelib.local.resources import ensure_resources
from chalicelib.local.stackfile import STACK_FILE, remove_stack_file, write_stack_file
from chalicelib.runner import sandbox as local_executor

PROJECT_DIR = Path(__file__).resolve().parents[2]


class _RequestHandler(ChaliceRequestHandler):
    """chalice local's handler, for every method: API Gateway answers TRACE, QUERY or any other method no route has
    as it does the rest (here 405, in the API's error shape), where http.server would answer 501 with an HTML page.

    It also sends each response at once (TCP_NODELAY): http.server writes headers and body separately, and on a
    kept-alive connection Nagle's algorithm holds the body until the client's delayed ACK, some 40 ms per request.
    """

    disable_nagle_algorithm = True

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """No access line per request: the stack stays quiet (docs/operations.md); errors still print."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # http.server looks up do_<METHOD>
            return self._generic_handle
        raise AttributeError(name)


@dataclass(frozen=True)
class LocalOptions:
    port: int
    emulator_port: int
    account: str
    admin_email: str
    api_key: str | None
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY

    @classmethod
    def from_environment(cls) -> LocalOptions:
        return cls(
            port=int(os.environ.get("PORT", "8000")),
            emulator_port=int(os.environ.get("EMULATOR_PORT", "5000")),
            account=os.environ.get("CONVEYOR_ACCOUNT", "local"),
            admin_email=os.environ.get("CONVEYOR_ADMIN_EMAIL", "admin@localhost"),
            api_key=os.environ.get("CONVEYOR_API_KEY") or None,
            max_concurrency=_max_concurrency(),
        )


def _max_concurrency() -> int:
    """Each queue's most batches at once: ``CONVEYOR_MAX_CONCURRENCY``, else ``CONVEYOR_WORKERS``, its older name
    (from when every queue kept that many workers, so at most that many jobs ran at once: they still do)."""
    configured = os.environ.get("CONVEYOR_MAX_CONCURRENCY") or os.environ.get("CONVEYOR_WORKERS")
    return int(configured) if configured else DEFAULT_MAX_CONCURRENCY


class _RequestPerThread:
    """``Chalice.current_request`` kept per thread. Chalice stores the request being handled on the app object, and
    Lambda handles one at a time; this server handles several at once (a runner's heartbeat, log chunks and
    reports overlap), and a view would otherwise read another thread's request: its body, its token."""

    def __init__(self) -> None:
        self._local = threading.local()

    def __get__(self, app: Any, owner: type) -> Any:
        return self if app is None else getattr(self._local, "request", None)

    def __set__(self, app: Any, request: Any) -> None:
        self._local.request = request


class _QuietServer(ThreadedHTTPServer):
    """chalice local's server, without a traceback for a client that went away mid-answer (a closed browser tab, a
    cancelled poll): that is the client's doing, not an error of the stack's. Other errors still print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def serve_api(app: Any, config: Any, port: int) -> LocalDevServer:
    """The API served over HTTP on 127.0.0.1:``port`` (0: any free port) from a thread, as chalice local does."""
    if not isinstance(type(app).__dict__.get("current_request"), _RequestPerThread):
        type(app).current_request = _RequestPerThread()
    server = LocalDevServer(app, config, "127.0.0.1", port, handler_cls=_RequestHandler, server_cls=_QuietServer)
    threading.Thread(target=server.server.serve_forever, name="chalice-local", daemon=True).start()
    return server


def local_config() -> Any:
    """The chalice config of the local stage (importing app.py applies the stage's environment variables)."""
    return CLIFactory(str(PROJECT_DIR), environ=os.environ).create_config_obj(chalice_stage_name="local")


def _kept_state() -> tuple[KeptState | None, str]:
    """Where the embedded emulator's state is kept (None: nowhere), and what the banner says of it."""
    folder = state_folder(PROJECT_DIR)
    if folder is None:
        return None, f"not kept (CONVEYOR_STATE_DIR={NO_STATE}): this stack starts empty and forgets all at its stop"
    kept = KeptState(folder)
    if not kept.claim():
        return None, f"not kept: another stack keeps its state in {folder}; this one forgets all at its stop"
    return kept, f"kept in {folder}"


def run_local(options: LocalOptions) -> None:
    """Start emulator (unless AWS_ENDPOINT_URL names one), resources, API, pump; serve until signalled."""
    # The stack knows its own URL: links it sends out (commit statuses, notifications) point at it unless set.
    os.environ.setdefault("CONVEYOR_BASE_URL", f"http://127.0.0.1:{options.port}")
    emulator = None
    kept: KeptState | None = None
    state_note = "kept behind AWS_ENDPOINT_URL"
    if os.environ.get("AWS_ENDPOINT_URL"):
        use_fake_credentials()
    else:
        kept, state_note = _kept_state()
        if kept is not None:
            os.environ["CONVEYOR_STATE_DIR"] = str(kept.folder)  # what a build's sandbox hides (runner/sandbox.py)
        emulator = Emulator(options.emulator_port, kept)
        emulator.start()
        if kept is not None:
            state_note = f"{state_note} ({emulator.restored}); to start empty, stop the stack and delete that folder"
            write_stack_file(kept.folder)
    config = local_config()
    app = config.chalice_app  # importing app.py applies the stage's environment variables
    ensure_resources(app)
    migrate()  # what an older version left: at AWS_ENDPOINT_URL, or in the state folder
    left_running = 0
    if emulator is not None:  # its own state: no other stack's runners are running its jobs (they died with the last)
        left_running = lost_jobs.end_left_running()
    key, _ = ensure_account(options.account, options.admin_email, options.api_key)
    os.environ.pop("CONVEYOR_API_KEY", None)  # the key is the stack's: nothing it starts may inherit it
    os.environ.setdefault("CONVEYOR_RUNNER_API_URL", f"http://127.0.0.1:{options.port}")

    server = serve_api(app, config, options.port)
    pump = SqsPump(app, max_concurrency=options.max_concurrency)
    pump.start()

    print(f"Conveyor is serving on http://127.0.0.1:{options.port}/api", flush=True)
    print(f"API key ({options.admin_email}, account {options.account}): {key}", flush=True)
    print(f"AWS endpoint: {os.environ['AWS_ENDPOINT_URL']}", flush=True)
    print(f"Dashboard: http://127.0.0.1:{options.port}/ (sign in with the key above)", flush=True)
    print(f"State: {state_note}", flush=True)
    if left_running:
        print(
            f"{left_running} job(s) were running when this stack last stopped: they failed, saying so (run their "
            "builds again to retry them).",
            flush=True,
        )
    if kept is not None:
        print(
            "Operator commands (conveyor create-account, create-api-key) use this stack while it runs: its "
            f"endpoint and credentials are in {kept.folder / STACK_FILE}, readable only by you",
            flush=True,
        )
    notice = executors.local_notice()
    if notice is not None:
        print(notice, file=sys.stderr, flush=True)
    refusal = executors.refusal()
    if refusal is not None:
        print(refusal, file=sys.stderr, flush=True)
    elif settings().unsafe_no_sandbox and not isinstance(local_executor.sandbox(), local_executor.Sandbox):
        print(local_executor.UNSAFE_WARNING, file=sys.stderr, flush=True)
    print("Press Ctrl-C to stop.", flush=True)

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    while not stop.wait(0.5):  # a signal that lands on another thread only runs its handler once the main thread wakes
        pass

    server.shutdown()
    pump.stop()
    if kept is not None:
        remove_stack_file(kept.folder)
    if emulator is not None:
        emulator.stop()
    print("Conveyor stopped.", file=sys.stderr, flush=True)
