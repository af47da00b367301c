"""A Job Object (kernel32, through ctypes): a process started in one, and every process it starts after, ends together.

``Popen.kill()`` ends one process, not its children; a Job Object ends the tree. The process is created suspended,
put in the job, then resumed, so no child of it starts outside. The job is made to kill what it holds when its last
handle closes: a runner or an agent that dies takes the job's processes with it. Jobs nest (Windows 8 and later): a
line's job inside the runner's, inside the agent's.
"""

from __future__ import annotations

import contextlib
import ctypes
import subprocess
from typing import Any

CREATE_SUSPENDED = 0x00000004
CREATE_NEW_PROCESS_GROUP = 0x00000200
_EXTENDED_LIMIT_INFORMATION = 9  # JobObjectExtendedLimitInformation
_KILL_ON_JOB_CLOSE = 0x00002000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", ctypes.c_uint64 * 6),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


def _kernel32() -> Any:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
    kernel32.SetInformationJobObject.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
    kernel32.AssignProcessToJobObject.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    kernel32.TerminateJobObject.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    kernel32.CloseHandle.argtypes = [ctypes.c_void_p]
    return kernel32


def _fail(what: str) -> OSError:
    code = ctypes.get_last_error()  # type: ignore[attr-defined]
    return OSError(code, f"{what} failed (Windows error {code})")


class JobObject:
    """One Job Object: ``start`` runs a process in it, ``terminate`` ends all it holds, ``close`` too."""

    def __init__(self) -> None:
        self._kernel32 = _kernel32()
        self._handle = self._kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise _fail("CreateJobObjectW")
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _KILL_ON_JOB_CLOSE
        if not self._kernel32.SetInformationJobObject(
            self._handle, _EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)
        ):
            error = _fail("SetInformationJobObject")
            self.close()
            raise error

    def start(self, argv: list[str] | str, **popen: Any) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(argv, **popen)`` inside the job: created suspended, assigned, then resumed."""
        flags = int(popen.pop("creationflags", 0)) | CREATE_SUSPENDED
        process: subprocess.Popen[bytes] = subprocess.Popen(argv, creationflags=flags, **popen)
        handle = int(process._handle)  # type: ignore[attr-defined]
        if not self._kernel32.AssignProcessToJobObject(self._handle, handle):
            error = _fail("AssignProcessToJobObject")
            process.kill()
            process.wait()
            raise error
        ntdll = ctypes.WinDLL("ntdll")  # type: ignore[attr-defined]
        ntdll.NtResumeProcess.argtypes = [ctypes.c_void_p]
        ntdll.NtResumeProcess(handle)
        return process

    def terminate(self, exit_code: int = 1) -> None:
        """End every process in the job, at once."""
        if self._handle:
            self._kernel32.TerminateJobObject(self._handle, exit_code)

    def close(self) -> None:
        """Close the job: what it still holds ends (kill on close)."""
        if self._handle:
            handle, self._handle = self._handle, None
            with contextlib.suppress(OSError):
                self._kernel32.CloseHandle(handle)

    def __enter__(self) -> JobObject:
        return self

    def __exit__(self, *_: object) -> None:
        self.terminate()
        self.close()
