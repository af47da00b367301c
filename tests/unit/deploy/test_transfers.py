"""A release provider's upload body: the bytes before and after a file, and the file, in blocks, stopping mid-file
when the deployment is stopped. No IO beyond an in-memory file."""

from __future__ import annotations

import io

import pytest

from chalicelib.deploy.base import DeployStopped
from chalicelib.deploy.transfers import StreamedBody


def test_the_body_is_its_parts_in_order_read_in_blocks_and_says_its_length() -> None:
    body = StreamedBody([b"--head\r\n", io.BytesIO(b"x" * 10), b"\r\n--tail"], 26, lambda: None)

    assert len(body) == 26
    assert body.read(4) == b"--he"
    assert b"".join(body) == b"ad\r\n" + b"x" * 10 + b"\r\n--tail"
    assert body.read() == b""


def test_a_stopped_deployment_stops_the_body_at_its_next_read() -> None:
    stopped = False

    def stop_if_asked() -> None:
        if stopped:
            raise DeployStopped()

    body = StreamedBody([io.BytesIO(b"x" * 100)], 100, stop_if_asked)
    first = body.read(10)
    stopped = True

    assert first == b"x" * 10
    with pytest.raises(DeployStopped):
        body.read(10)
