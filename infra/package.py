"""``make package``: ``chalice package --merge-template`` of one stage, with the dependencies Lambda needs.

    python -m infra.package --stage prod out/prod       # out/prod/sam.json and out/prod/deployment.zip

The app is copied to a build directory and packaged from there, so that what goes into deployment.zip is chosen
here rather than taken from requirements.txt, which also installs the development tools:

- the code: app.py and chalicelib/ (without bytecode); Chalice adds its own runtime module;
- the dependencies, in the copy's vendor/ (which Chalice copies into the zip as it is), its requirements.txt left
  empty. Chalice's packager would install the whole closure of requirements.txt for the Python it runs under:
  chalice itself with pip, setuptools and its CLI's packages, boto3, and botocore (which pynamodb requires). The
  Lambda runtime provides boto3 and botocore, and the project's Python (3.11) is one Lambda no longer creates.
  So vendor/ holds the closure of requirements.txt's runtime packages, at the versions installed here (the ones
  the tests ran with) less what the runtime provides, each installed by pip with ``--no-deps`` from the wheels
  for the runtime's Python and platform.

``--no-dependencies`` leaves vendor/ empty: the same template, in seconds and without a package index (the test).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from importlib.metadata import distribution
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra.stage import load_stage
from infra.template import LAMBDA_RUNTIME, merge_template

PROJECT_DIR = Path(__file__).resolve().parents[1]
FRAMEWORK = {"chalice"}  # Chalice puts the part the functions import (chalice/app.py) in the zip itself
PROVIDED_BY_RUNTIME = {"boto3", "botocore", "s3transfer"}  # in every Python runtime of Lambda
PLATFORM_GLIBC = (2, 34)  # Amazon Linux 2023, under Lambda's python3.12 and later
APP_FILES = ["app.py", "chalicelib", ".chalice/config.json"]


def lambda_requirements(requirements: Path = PROJECT_DIR / "requirements.txt") -> list[str]:
    """``name==version`` of every package the functions need, the runtime's own and Chalice left out."""
    environment = _target_environment()
    lines = [line.split("#")[0].strip() for line in requirements.read_text().splitlines()]
    roots = [Requirement(line) for line in lines if line]
    pending = deque(root for root in roots if canonicalize_name(root.name) not in FRAMEWORK)
    pending = deque(root for root in pending if _applies(root, environment, ""))
    pinned: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()  # (package, extra) already followed
    while pending:
        requirement = pending.popleft()
        name = canonicalize_name(requirement.name)
        new = {(name, extra) for extra in {"", *requirement.extras}} - seen
        if name in PROVIDED_BY_RUNTIME or not new:
            continue
        seen |= new
        found = distribution(name)  # PackageNotFoundError: the runtime needs what this environment did not install
        pinned[name] = found.version
        for line in found.requires or []:
            dependency = Requirement(line)
            if any(_applies(dependency, environment, extra) for _, extra in new):
                pending.append(dependency)
    return [f"{name}=={version}" for name, version in sorted(pinned.items())]


def _target_environment() -> dict[str, str]:
    version = LAMBDA_RUNTIME.removeprefix("python")
    environment = {key: str(value) for key, value in default_environment().items()}
    environment.update(
        python_version=version,
        python_full_version=f"{version}.0",
        implementation_name="cpython",
        platform_python_implementation="CPython",
        sys_platform="linux",
        platform_system="Linux",
        platform_machine="x86_64",
        os_name="posix",
    )
    return environment


def _applies(requirement: Requirement, environment: dict[str, str], extra: str) -> bool:
    return requirement.marker is None or requirement.marker.evaluate({**environment, "extra": extra})


def install_dependencies(target: Path, requirements: list[str]) -> None:
    """pip installs exactly ``requirements`` into ``target``, as wheels for the Lambda runtime's Python and platform."""
    major, minor = PLATFORM_GLIBC
    platforms = [f"manylinux_{major}_{glibc}_x86_64" for glibc in range(17, minor + 1)] + ["manylinux2014_x86_64"]
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target), "--no-deps", "--no-compile"]
    command += [
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        LAMBDA_RUNTIME.removeprefix("python"),
    ]
    command += [option for platform in platforms for option in ("--platform", platform)]
    subprocess.run([*command, *requirements], check=True)
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts: nothing runs them in Lambda


def package(stage: str, out: Path, project_dir: Path = PROJECT_DIR, dependencies: bool = True) -> Path:
    """Write ``sam.json`` and ``deployment.zip`` of ``stage`` into ``out``; returns the template's path."""
    out = out.resolve()  # chalice package takes a relative path from the project directory, the copy
    with tempfile.TemporaryDirectory(prefix="conveyor-package-") as work:
        build = Path(work) / "app"
        for name in APP_FILES:
            source, copy = project_dir / name, build / name
            copy.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, copy)
        (build / "requirements.txt").write_text("# The dependencies are in vendor/: see infra/package.py.\n")
        (build / "vendor").mkdir()
        if dependencies:
            install_dependencies(build / "vendor", lambda_requirements(project_dir / "requirements.txt"))
        merge = Path(work) / "merge.json"
        merge.write_text(json.dumps(merge_template(load_stage(str(project_dir), stage)), indent=2))
        # Chalice asks botocore for a region; the template names none (it uses ${AWS::Region}).
        env = {"AWS_DEFAULT_REGION": "us-east-1", **os.environ}
        chalice = [sys.executable, "-c", "from chalice.cli import main; main()", "--project-dir", str(build)]
        subprocess.run(
            [*chalice, "package", "--stage", stage, "--merge-template", str(merge), str(out)], check=True, env=env
        )
    template = out / "sam.json"
    partial = [
        name for name, resource in json.loads(template.read_text())["Resources"].items() if "Type" not in resource
    ]
    if partial:  # the merge template patched a resource that Chalice did not generate
        raise SystemExit(f"infra.package: the merge template names resources Chalice did not make: {partial}")
    return template


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.package", description=__doc__.splitlines()[0])
    parser.add_argument("--stage", default="prod", help="a stage of .chalice/config.json (default: prod)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help="the Chalice project (default: this one)")
    parser.add_argument("--no-dependencies", action="store_true", help="package the code only (same template)")
    parser.add_argument("out", type=Path, help="where sam.json and deployment.zip go")
    args = parser.parse_args(argv)
    template = package(args.stage, args.out, args.project_dir, dependencies=not args.no_dependencies)
    archive = template.with_name("deployment.zip")
    print(f"{template} and {archive.name} ({archive.stat().st_size / 2**20:.1f} MB): {args.stage}, {LAMBDA_RUNTIME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
