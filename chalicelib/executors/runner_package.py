"""The runner as one zip file, for executors that start from someone else's image (CodeBuild's buildspec fetches it).

It holds the runner's own code and what it imports of this package (the job protocol's types, the git client and its
outbound guard), not the service: no store, no domain, no AWS client. ``python3 runner.zip`` runs the ticket on
standard input; ``--check`` says whether the image has the runner's libraries, ``--requirements`` lists them (pinned
to what the service runs with), for ``pip install --target <folder of the zip>/site``.
"""

from __future__ import annotations

import functools
import io
import zipfile
from importlib.metadata import version
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
_CODE = (
    "chalicelib/__init__.py",
    "chalicelib/config.py",
    "chalicelib/protocol",
    "chalicelib/runner",
    "chalicelib/scm",
    "chalicelib/outbound",
)
# the runner's libraries by distribution name, and a module of each to check for
LIBRARIES = {
    "urllib3": "urllib3",
    "dulwich": "dulwich",
    "paramiko": "paramiko",
    "cryptography": "cryptography",
    "requests": "requests",
    "requests-hardened": "requests_hardened",
}
MAIN = '''"""Conveyor's runner: runs the job of the ticket on standard input."""
import os
import sys

if sys.version_info < (3, 11):
    sys.exit("Conveyor: the runner needs Python 3.11 or later; this is %d.%d." % sys.version_info[:2])
site = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "site")
if os.path.isdir(site):
    sys.path.insert(1, site)
if sys.argv[1:] == ["--requirements"]:
    print(REQUIREMENTS)
    sys.exit(0)
if sys.argv[1:] == ["--check"]:
    import importlib.util

    missing = [name for name in MODULES if importlib.util.find_spec(name) is None]
    if missing:
        print("Conveyor: installing the runner's libraries (%s missing)" % ", ".join(missing))
    sys.exit(1 if missing else 0)
from chalicelib.runner.job import main

sys.exit(main())
'''


@functools.cache
def runner_zip() -> bytes:
    """The zip, made once per process from the code the service runs."""
    requirements = "\n".join(f"{name}=={version(name)}" for name in LIBRARIES)
    header = f"REQUIREMENTS = {requirements!r}\nMODULES = {list(LIBRARIES.values())!r}\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__main__.py", header + MAIN)
        for entry in _CODE:
            path = _ROOT / entry
            files = [path] if path.is_file() else sorted(path.rglob("*.py"))
            for file in files:
                archive.write(file, file.relative_to(_ROOT).as_posix())
    return buffer.getvalue()
