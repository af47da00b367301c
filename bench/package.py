"""The deployment package: the size of ``make package``'s deployment.zip, and what is in it.

``python -m infra.package --stage prod`` builds it as ``make package`` does (dependencies from the package index,
for the Lambda runtime); a bare Chalice app (one route, no dependencies) and the project packaged by plain
``chalice package`` (its requirements.txt as it is) are packaged in temporary directories for comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench import Figure, Section

PROJECT_DIR = Path(__file__).resolve().parents[1]
MAX_ZIPPED = 50 * 1024 * 1024  # Lambda's limits for a package uploaded as a zip
MAX_UNZIPPED = 250 * 1024 * 1024
# Provided by the runtime (boto3, botocore, s3transfer) or only used to develop, test and package.
NEEDLESS = ["boto3", "botocore", "s3transfer", "moto", "pytest", "pip", "setuptools", "wheel", "click", "mypy", "ruff"]
HELLO_APP = """from chalice import Chalice

app = Chalice(app_name="hello")


@app.route("/")
def index():
    return {"hello": "world"}
"""
CHALICE = [sys.executable, "-c", "from chalice.cli import main; main()"]


@dataclass(frozen=True)
class Package:
    zipped: int
    unzipped: int
    top_level: Counter[str]  # unzipped bytes by top-level name (package, module or .dist-info)
    seconds: float

    def describe(self) -> str:
        return f"{_mb(self.zipped)} zipped, {_mb(self.unzipped)} unzipped"


def run() -> Section:
    section = Section("Deployment package", __doc__.split("\n\n", 1)[1].replace("\n", " ").strip())
    with tempfile.TemporaryDirectory(prefix="conveyor-bench-package-") as work:
        conveyor = _measure(Path(work) / "conveyor", [sys.executable, "-m", "infra.package", "--stage", "prod"])
        bare = _measure(Path(work) / "hello-out", [*CHALICE, "--project-dir", str(_hello_app(Path(work))), "package"])
        plain = _measure(
            Path(work) / "plain-out",
            [*CHALICE, "--project-dir", str(_project_copy(Path(work))), "package", "--stage", "prod"],
        )
    needless = sorted({name for name in conveyor.top_level if name.split("-")[0].split(".")[0] in NEEDLESS})
    section.figures += [
        Figure("deployment.zip, zipped", _mb(conveyor.zipped), f"≤ {_mb(MAX_ZIPPED)}", conveyor.zipped <= MAX_ZIPPED),
        Figure(
            "deployment.zip, unzipped",
            _mb(conveyor.unzipped),
            f"≤ {_mb(MAX_UNZIPPED)}",
            conveyor.unzipped <= MAX_UNZIPPED,
        ),
        Figure(
            "runtime and development packages in it",
            ", ".join(needless) or "none",
            "none (" + ", ".join(NEEDLESS) + ")",
            not needless,
        ),
        Figure("a bare Chalice app (one route), packaged the same way", bare.describe()),
        Figure("the project by plain `chalice package` (requirements.txt as it is)", plain.describe()),
        Figure("time to package (dependencies from the index, pip's cache warm)", f"{conveyor.seconds:.1f} s"),
    ]
    largest = ", ".join(f"{name} {_mb(size)}" for name, size in conveyor.top_level.most_common(5))
    section.notes.append(f"Largest in deployment.zip, unzipped: {largest}.")
    added = sorted(name for name in set(plain.top_level) - set(conveyor.top_level) if not name.endswith(".dist-info"))
    section.notes.append(f"What plain `chalice package` adds: {', '.join(added)}.")
    return section


def _measure(out: Path, command: list[str]) -> Package:
    started = time.perf_counter()
    env = {"AWS_DEFAULT_REGION": "us-east-1", **os.environ}  # chalice asks for a region; it calls nothing
    subprocess.run([*command, str(out)], check=True, cwd=PROJECT_DIR, env=env, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    archive = out / "deployment.zip"
    top_level: Counter[str] = Counter()
    with zipfile.ZipFile(archive) as opened:
        for entry in opened.infolist():
            top_level[entry.filename.split("/")[0]] += entry.file_size
    return Package(archive.stat().st_size, sum(top_level.values()), top_level, seconds)


def _hello_app(work: Path) -> Path:
    project = work / "hello"
    (project / ".chalice").mkdir(parents=True)
    (project / "app.py").write_text(HELLO_APP)
    (project / "requirements.txt").write_text("")
    config = {"version": "2.0", "app_name": "hello", "stages": {"dev": {"api_gateway_stage": "api"}}}
    (project / ".chalice" / "config.json").write_text(json.dumps(config))
    return project


def _project_copy(work: Path) -> Path:
    project = work / "plain"
    shutil.copytree(PROJECT_DIR / "chalicelib", project / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("app.py", "requirements.txt", ".chalice/config.json"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_DIR / name, project / name)
    return project


def _mb(size: int) -> str:
    """MB of 2^20 bytes, as Lambda counts its limits; KB below one."""
    return f"{size / 2**20:.1f} MB" if size >= 2**20 else f"{size / 2**10:.0f} KB"
