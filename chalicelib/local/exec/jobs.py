"""One job of ``conveyor exec`` as the in-process service keeps it (local/exec/service.py): its token and spec, and
what its runner reports through the job protocol (its log, messages, tests, artifacts, result), printed as it comes.
"""

from __future__ import annotations

import base64
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from chalicelib.local.exec.console import Console, LogLines
from chalicelib.protocol.job_spec import JobSpec

Json = dict[str, Any]
MAX_TESTS_LISTED = 20  # beyond this, only the failed tests are printed by name


@dataclass
class ExecJob:
    """A job's state while it runs, and what the summary reads once it ended."""

    spec: JobSpec
    console: Console
    prefix: str  # its lines' prefix (its name when several jobs run)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    log: LogLines = field(default_factory=LogLines)
    messages: list[Json] = field(default_factory=list)
    tests: dict[str, Json] = field(default_factory=dict)  # by name: an update replaces the fields it carries
    artifacts: list[Json] = field(default_factory=list)
    result: str | None = None  # "success", "failed" or "cancelled" once finished
    message: str | None = None
    version: str | None = None  # UpdateBuild -Version
    cancelling: bool = False  # Ctrl-C: the next heartbeat says so and the runner stops the job
    started: float = field(default_factory=time.monotonic)
    seconds: float | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def holds(self, authorization: str) -> bool:
        """Whether a request's Authorization header carries this job's token (and the job still runs)."""
        scheme, _, token = authorization.strip().partition(" ")
        return (
            scheme.lower() == "bearer" and hmac.compare_digest(token.strip(), self.token) and not self.finished.is_set()
        )

    def put_log(self, index: int, data: bytes, final: bool = False) -> None:
        """A chunk of the log: its new lines printed."""
        for line in self.log.put(index, data, final):
            self.console.say(line, self.prefix)

    def add_messages(self, messages: list[Json]) -> None:
        """``appveyor AddMessage`` (and compilation messages): kept, printed after the log."""
        with self._lock:
            self.messages += messages

    def add_tests(self, tests: list[Json], update: bool = False) -> None:
        """``appveyor AddTest``/``UpdateTest`` and result files: kept by name, printed after the log."""
        with self._lock:
            for test in tests:
                name = str(test.get("testName") or "")
                earlier = self.tests.get(name, {}) if update else {}
                self.tests[name] = {**earlier, **{key: value for key, value in test.items() if value is not None}}

    def reports(self) -> list[str]:
        """What the job reported, in lines printed after its log: its messages, its tests (every failed one by name,
        the others by name when there are few), its artifacts."""
        lines = []
        for message in self.messages:
            details = f" ({message['details']})" if message.get("details") else ""
            lines.append(f"Message ({message.get('category') or 'information'}): {message.get('message', '')}{details}")
        tests = list(self.tests.values())
        for test in tests:
            if len(tests) <= MAX_TESTS_LISTED or test.get("outcome") == "Failed":
                lines.append(f"Test {test.get('outcome') or 'None'}: {test.get('testName')}")
        if tests:
            passed, failed = self.counts()
            lines.append(f"Tests: {len(tests)}, {passed} passed, {failed} failed")
        lines += [
            f"Artifact: {artifact['fileName']} ({int(artifact.get('size') or 0):,} bytes)"
            for artifact in self.artifacts
        ]
        return lines

    def counts(self) -> tuple[int, int]:
        """Tests passed and failed."""
        with self._lock:
            outcomes = [str(test.get("outcome") or "") for test in self.tests.values()]
        return outcomes.count("Passed"), outcomes.count("Failed")

    def add_artifact(self, fields: Json) -> None:
        with self._lock:
            self.artifacts = [a for a in self.artifacts if a["fileName"] != fields["fileName"]] + [fields]

    def finish(self, body: Json) -> None:
        """The runner's last word: its log's last chunk, its result."""
        chunks = int(body.get("logChunks") or 0)
        tail = body.get("logTail")
        if tail is not None and chunks:
            self.put_log(chunks - 1, base64.b64decode(tail), final=True)
        for line in self.log.end():
            self.console.say(line, self.prefix)
        with self._lock:
            self.artifacts = [dict(artifact) for artifact in body.get("artifacts") or []] or self.artifacts
        for line in self.reports():
            self.console.say(line, self.prefix)
        self.result, self.message = str(body.get("result") or "failed"), body.get("message")
        self.seconds = time.monotonic() - self.started
        self.finished.set()
