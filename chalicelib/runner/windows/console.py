"""Text from Windows programs: UTF-8 where it is, else the OEM code page a console program writes when redirected."""

from __future__ import annotations

import codecs
import ctypes
import functools
from collections.abc import Iterable, Mapping


@functools.cache
def oem_encoding() -> str:
    """This machine's OEM code page (``GetOEMCP``) as a Python codec; cp437 where there is none."""
    try:
        page = int(ctypes.WinDLL("kernel32").GetOEMCP())  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return "cp437"
    name = "utf-8" if page == 65001 else f"cp{page}"
    try:
        codecs.lookup(name)
    except LookupError:
        return "cp437"
    return name


def decode(raw: bytes) -> str:
    """A line of output as text: UTF-8 when it is valid UTF-8, else in the OEM code page."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode(oem_encoding(), errors="replace")


def variable(environment: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """A variable of a Windows environment, its name compared ignoring case (``default`` when it has none)."""
    return next((value for key, value in environment.items() if key.upper() == name.upper()), default)


def merged(base: Mapping[str, str], changes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``base`` with ``changes`` applied, names compared ignoring case (``Path`` and ``PATH`` are one variable on
    Windows; two spellings in one environment block would leave a program either): a changed name keeps the new
    spelling."""
    result = dict(base)
    by_upper = {name.upper(): name for name in result}
    for name, value in changes:
        old = by_upper.get(name.upper())
        if old is not None and old != name:
            del result[old]
        result[name] = value
        by_upper[name.upper()] = name
    return result
