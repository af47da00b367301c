"""The runner as one zip file: the runner's code and none of the service's, runnable with python3."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

from chalicelib.executors.runner_package import LIBRARIES, runner_zip


def test_the_zip_holds_the_runner_and_its_git_client_but_no_store_domain_or_aws() -> None:
    names = zipfile.ZipFile(io.BytesIO(runner_zip())).namelist()

    assert "__main__.py" in names and "chalicelib/runner/job.py" in names and "chalicelib/scm/transport.py" in names
    assert not [name for name in names if name.startswith(("chalicelib/store", "chalicelib/domain", "chalicelib/aws"))]


def test_the_zip_lists_the_libraries_it_needs_pinned(tmp_path: Path) -> None:
    package = tmp_path / "runner.zip"
    package.write_bytes(runner_zip())

    listed = subprocess.run(
        [sys.executable, str(package), "--requirements"], capture_output=True, text=True, check=True
    ).stdout.split()

    assert [line.split("==")[0] for line in listed] == list(LIBRARIES)
    assert all("==" in line for line in listed)


def test_the_zip_holds_every_module_of_the_service_the_runner_imports(tmp_path: Path) -> None:
    package = tmp_path / "runner.zip"
    package.write_bytes(runner_zip())
    program = (
        f"import sys; sys.path.insert(0, {str(package)!r}); import chalicelib.runner.job; "
        "print(*(getattr(m, '__file__', None) or '' for n, m in sys.modules.items() if n.startswith('chalicelib')))"
    )

    loaded = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, check=True)

    files = loaded.stdout.split()
    assert any(file.endswith("chalicelib/protocol/job_spec.py") for file in files)
    assert [file for file in files if not file.startswith(str(package))] == []
