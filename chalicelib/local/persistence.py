"""The local stack's state on disk: what the embedded emulator holds survives a restart.

moto keeps everything in memory, in its backends (one per service, account and region). The stack keeps a
snapshot of those it stores data in (DynamoDB: projects, keys, builds; S3: logs, artifacts, cache; KMS: the key
that encrypts secrets) in its state folder, restores it before it serves, and writes it again a moment after
each change and when it stops. It is moto's own state, pickled, as moto's maintainers suggest for keeping a
server's state (getmoto/moto#1069); moto's request recorder does not fit: a replayed key gets new random key
material (every stored secret would no longer decrypt) and a replayed multipart upload a new id, and a replay
grows with every request ever made.

Queues are not kept: what was waiting on them is sent again by the lease sweeper (messages still owed minutes
after their write), as after any lost message. A snapshot is taken while no request is in the emulator (the
``Gate`` middleware holds new ones for that moment); SQS's long polls do not pass through it.

The folder is the user's to see and delete: ``CONVEYOR_STATE_DIR`` (default ``.conveyor`` in the project folder),
readable only by its owner, as it holds every secret's key. One stack at a time keeps its state there (a lock);
another one started beside it keeps nothing.
"""

from __future__ import annotations

import copyreg
import fcntl
import functools
import io
import os
import pickle
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from moto.backends import get_backend

from chalicelib.runner.sandbox import DEFAULT_STATE_FOLDER

KEPT_SERVICES = ("dynamodb", "s3", "kms")
SNAPSHOT = "emulator.pickle"
LOCK = "lock"
SAVE_DELAY_SECONDS = 1.0  # a change is on disk this long after it, at most (plus the time to write it)
QUIET_WAIT_SECONDS = 30.0  # how long a snapshot waits for a moment with no request in flight before it holds them
NO_STATE = "none"  # CONVEYOR_STATE_DIR=none: keep nothing, start empty each time
_READS = ("Get", "BatchGet", "Query", "Scan", "TransactGet", "Describe", "List")
_KMS_READS = ("Encrypt", "Decrypt", "GenerateDataKey", "Describe", "List", "Get")


def state_folder(project_dir: Path) -> Path | None:
    """Where the local stack keeps its state: CONVEYOR_STATE_DIR, else ``.conveyor`` in the project folder; None
    when it is set to ``none``."""
    configured = os.environ.get("CONVEYOR_STATE_DIR", "").strip()
    if configured.lower() == NO_STATE:
        return None
    return Path(configured).resolve() if configured else project_dir / DEFAULT_STATE_FOLDER


def _service(environ: dict[str, Any]) -> str:
    """The AWS service a request is signed for (its credential scope), '' when unsigned."""
    scope = environ.get("HTTP_AUTHORIZATION", "")
    if "X-Amz-Credential=" in environ.get("QUERY_STRING", ""):
        return "s3"  # a presigned URL: only S3's are made
    parts = scope.split("Credential=", 1)[-1].split("/")
    return parts[3] if len(parts) > 4 else ""


def _changes(environ: dict[str, Any], service: str) -> bool:
    """Whether a request may change what is kept."""
    if service == "s3":
        return environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE")
    operation = environ.get("HTTP_X_AMZ_TARGET", "").rpartition(".")[2]
    reads = _READS if service == "dynamodb" else _KMS_READS
    return not operation.startswith(reads)


class Gate:
    """WSGI middleware: requests to a kept service pass while no snapshot is being taken (``closed``), and mark the
    state changed when they may change it."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._changed = threading.Condition()
        self._in_flight = 0
        self._closed = False
        self.dirty = False

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        service = _service(environ)
        if service not in KEPT_SERVICES:
            return self._app(environ, start_response)
        with self._changed:
            self._changed.wait_for(lambda: not self._closed)
            self._in_flight += 1
            if _changes(environ, service):
                self.dirty = True
                self._changed.notify_all()
        try:
            return list(self._app(environ, start_response))
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify_all()

    def wait_for_change(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.dirty, timeout)

    @contextmanager
    def closed(self) -> Iterator[None]:
        """No request in the emulator for the time of the block (new ones wait). It waits first for a moment with
        none in flight while letting new ones in (a long upload must not hold every other request back), for
        QUIET_WAIT_SECONDS at most; then it holds new ones back until those in flight are done."""
        with self._changed:
            self._changed.wait_for(lambda: self._in_flight == 0, QUIET_WAIT_SECONDS)
            self._closed = True
            self._changed.wait_for(lambda: self._in_flight == 0)
            self.dirty = False
        try:
            yield
        finally:
            with self._changed:
                self._closed = False
                self._changed.notify_all()


def _load_rsa_key(der: bytes) -> Any:
    return serialization.load_der_private_key(der, None)


def _rsa_key(key: Any) -> tuple[Callable[[bytes], Any], tuple[bytes]]:
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return _load_rsa_key, (der,)


def _new_lock(lock: Any) -> tuple[Callable[[], Any], tuple[()]]:
    return type(lock), ()


_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


@functools.cache
def _dispatch_table() -> dict[type, Any]:
    """pickle's table, plus what moto's backends hold that pickle cannot write: locks (new ones on load) and the
    RSA keys moto makes for KMS keys (as DER)."""
    table: dict[type, Any] = dict(copyreg.dispatch_table)
    for lock_type in _LOCK_TYPES:
        table[lock_type] = _new_lock
    table[type(rsa.generate_private_key(65537, 1024))] = _rsa_key
    return table


class KeptState:
    """The emulator's backends in ``folder``: ``restore`` once before serving, then ``start`` saving."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.gate: Gate | None = None
        self._lock_file: IO[bytes] | None = None
        self._stopping = threading.Event()
        self._saver: threading.Thread | None = None

    @property
    def snapshot(self) -> Path:
        return self.folder / SNAPSHOT

    def claim(self) -> bool:
        """Make the folder (only its owner may read it) and hold its lock; False if another stack holds it."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
        lock_file = (self.folder / LOCK).open("ab")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock_file.close()
            return False
        self._lock_file = lock_file
        return True

    def restore(self) -> str:
        """Put the snapshot's backends in place of moto's (empty) ones; says what it did."""
        if not self.snapshot.exists():
            return "nothing kept yet"
        try:
            with self.snapshot.open("rb") as source:
                kept: dict[str, dict[str, dict[str, Any]]] = pickle.load(source)
        except Exception as error:  # noqa: BLE001 (written by another moto version, or cut short: start empty)
            aside = self.snapshot.with_suffix(".unreadable")
            self.snapshot.replace(aside)
            return f"the snapshot could not be read ({type(error).__name__}); it was moved to {aside}, starting empty"
        for service, accounts in kept.items():
            live = get_backend(service)  # type: ignore[call-overload]
            for account, regions in accounts.items():
                for region, backend in regions.items():
                    live[account][region] = backend
        return "restored"

    def save(self) -> None:
        """Write the kept backends to the snapshot (whole, then renamed over the old one)."""
        assert self.gate is not None
        buffer = io.BytesIO()
        with self.gate.closed():
            state = {
                service: {account: dict(regions) for account, regions in get_backend(service).items()}  # type: ignore[call-overload]
                for service in KEPT_SERVICES
            }
            pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = _dispatch_table()
            pickler.dump(state)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # deleted while the stack runs: made again
        partial = self.snapshot.with_suffix(".partial")
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as target:
            target.write(buffer.getbuffer())
            target.flush()
            os.fsync(target.fileno())
        partial.replace(self.snapshot)

    def wrap(self, app: Callable[..., Iterable[bytes]]) -> Gate:
        self.gate = Gate(app)
        return self.gate

    def start(self) -> None:
        """Save a moment after each change, from a thread, until ``stop``."""
        self._saver = threading.Thread(target=self._save_changes, name="emulator-state", daemon=True)
        self._saver.start()

    def _save_changes(self) -> None:
        assert self.gate is not None
        while not self._stopping.is_set():
            if self.gate.wait_for_change(0.5) and not self._stopping.wait(SAVE_DELAY_SECONDS):
                self.save()

    def stop(self) -> None:
        """Save what changed since the last snapshot, and let the folder go."""
        self._stopping.set()
        if self._saver is not None:
            self._saver.join()
        if self.gate is not None and self.gate.dirty:
            self.save()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None
