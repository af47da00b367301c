"""The app served over HTTP on loopback from this process, as ``conveyor local`` serves it: what the runners of the
jobs a benchmark dispatches call (the job protocol). Quiet: without chalice local's line per request."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def served_api() -> Iterator[str]:
    """The API's URL while the block runs."""
    from chalicelib.local.stack import local_config, serve_api

    config = local_config()
    server = serve_api(config.chalice_app, config, 0)
    handler = server.server.RequestHandlerClass  # a partial of the stack's handler class, with the app and config
    quiet = type("QuietHandler", (handler.func,), {"log_message": _no_log})
    server.server.RequestHandlerClass = functools.partial(quiet, *handler.args, **handler.keywords)
    try:
        yield f"http://127.0.0.1:{server.server.server_address[1]}"
    finally:
        server.shutdown()


def _no_log(self: Any, *_: Any) -> None:
    pass
