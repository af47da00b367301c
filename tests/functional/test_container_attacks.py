"""Attacks on the container executor's runner from a build in its container (review of issue 35): the runner reads
the build folder on the machine's side, where a link means what the machine has there, not what the container has."""

from __future__ import annotations

import pytest

from chalicelib.executors import containers
from tests.builds import appveyor_yml
from tests.functional.test_containers import pump  # noqa: F401 (a fixture: the pump with containers on)
from tests.functional.test_sandbox import output_lines

REFUSAL = containers.refusal()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no container can run here: {REFUSAL}")
OUTSIDE = containers.PROJECT_DIR  # a folder of the machine the runner sees and the container does not


def _swap_build_folder_for_a_link_to(target: str) -> str:
    # the build folder is projects/<slug>, owned by the build's user: it may rename it and leave a link in its place
    return f'  - cd "$HOME/projects" && mv "$APPVEYOR_PROJECT_SLUG" moved && ln -s {target} "$APPVEYOR_PROJECT_SLUG"'


def test_a_build_folder_swapped_for_a_link_does_not_make_the_machines_files_artifacts(make_project) -> None:  # noqa: F811
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "build_script:",
                "  - test -e pyproject.toml && echo IN-CONTAINER || echo NOT-IN-CONTAINER",
                _swap_build_folder_for_a_link_to(str(OUTSIDE)),
                "artifacts:",
                "  - path: pyproject.toml",
            )
        }
    )

    build = project.run()
    job_id = build["jobs"][0]["jobId"]
    log = project.log(job_id)
    artifacts = [artifact["fileName"] for artifact in project.account.api.get(f"/buildjobs/{job_id}/artifacts").json]

    assert output_lines(log, "NOT-IN-CONTAINER") == ["NOT-IN-CONTAINER"], log  # the container cannot read it
    assert "pyproject.toml" not in artifacts, log  # nor may the runner hand it over


def test_a_build_folder_swapped_for_a_link_does_not_put_the_machines_files_in_the_cache(make_project) -> None:  # noqa: F811
    project = make_project(
        {
            "appveyor.yml": appveyor_yml(
                "cache:",
                "  - chalicelib",
                "build_script:",
                _swap_build_folder_for_a_link_to(str(OUTSIDE)),
            )
        }
    )

    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])

    assert build["status"] == "success", log
    assert "Updating build cache entry 'chalicelib'" not in log, log  # the machine's folder, archived by the runner


SWAPPER = """\
import os, sys
target = sys.argv[1]
while True:
    os.symlink(target, "swap.link")
    os.replace("swap.link", "pushed.txt")
    with open("swap.file", "w") as file:
        file.write("x")
    os.replace("swap.file", "pushed.txt")
"""


def test_appveyor_pushartifact_of_a_file_swapped_for_a_link_meanwhile_takes_no_file_of_the_machine(
    make_project,  # noqa: F811
) -> None:
    # the runner checks the path's links, then reads the file by its name again: a link put there in between is
    # followed on the machine's side
    project = make_project(
        {
            "swapper.py": SWAPPER,
            "appveyor.yml": appveyor_yml(
                "build_script:",
                f"  - python3 swapper.py {OUTSIDE / 'pyproject.toml'} & sleep 0.5",
                "  - for i in $(seq 1 100); do appveyor PushArtifact pushed.txt -FileName pushed-$i.txt"
                " > /dev/null 2>&1; done; echo PUSHED",
            ),
        }
    )

    build = project.run()
    job_id = build["jobs"][0]["jobId"]
    log = project.log(job_id)
    sizes = {a["fileName"]: a["size"] for a in project.account.api.get(f"/buildjobs/{job_id}/artifacts").json}

    assert output_lines(log, "PUSHED") == ["PUSHED"], log
    machine_file_size = (OUTSIDE / "pyproject.toml").stat().st_size
    assert [name for name, size in sizes.items() if size == machine_file_size] == [], sizes  # "x" only, ever


def test_a_build_folder_swapped_for_a_link_by_init_does_not_lead_the_runners_clone_out_of_it(
    make_project,  # noqa: F811
) -> None:
    # init runs before the runner fetches the source into the build folder: through a link, the runner would write
    # the checkout wherever the link leads on the machine's side (here its /tmp, which the container does not see)
    project = make_project({"appveyor.yml": appveyor_yml("init:", _swap_build_folder_for_a_link_to("/tmp"))})

    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])

    assert build["status"] == "failed", log
    assert "The source was not fetched: the build folder is no longer a folder" in log, log
