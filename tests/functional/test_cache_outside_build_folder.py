"""``cache:`` entries outside the build folder, as AppVeyor users write them (``$HOME/.cargo``, ``~/.m2``,
``C:\\Users\\appveyor\\.ivy2``, an absolute folder), through real builds in the local executor's sandbox: kept by
the job's own shell, with the job's own rights. The attacks: an entry naming what the job cannot read (the runner's
own memory and environment), and an archive the job forged to plant files where it may not write.
"""

from __future__ import annotations

import base64
import io
import tarfile
from pathlib import Path

import pytest

from tests.builds import BuildProject, appveyor_yml
from tests.functional.test_sandbox import AS_ROOT, needs_sandbox, output_lines

pytestmark = needs_sandbox
FILL_OR_CHECK = [
    "install:",
    "  - 'if [ -f ~/.cargo/registry/crate ]; then echo RESTORED; else echo FRESH; fi'",
    "  - cat ~/.cargo/registry/crate ~/.m2/repository/jar ~/.ivy2/cache/ivy /tmp/kept-tool/bin/tool || true",
    "build_script:",
    "  - set -x",
    "  - mkdir -p ~/.cargo/registry ~/.m2/repository ~/.ivy2/cache /tmp/kept-tool/bin",
    "  - echo crate-1 > ~/.cargo/registry/crate && echo jar-1 > ~/.m2/repository/jar && echo ivy-1 > ~/.ivy2/cache/ivy",
    "  - echo tool-1 > /tmp/kept-tool/bin/tool && ln -sf tool /tmp/kept-tool/bin/link",
    "  - echo still traced",
]
CACHE = ["cache:", "  - $HOME/.cargo", "  - ~/.m2", "  - C:\\Users\\appveyor\\.ivy2", "  - /tmp/kept-tool"]


def successful_log(project: BuildProject) -> str:
    """The log of a new build of ``project``, which succeeded."""
    build = project.run()
    log = project.log(build["jobs"][0]["jobId"])
    assert build["status"] == "success", log
    return log


def test_entries_in_the_home_folder_and_absolute_folders_come_back_in_the_next_build(make_project) -> None:  # type: ignore[no-untyped-def]
    project: BuildProject = make_project({"appveyor.yml": appveyor_yml(*CACHE, *FILL_OR_CHECK)})

    log = successful_log(project)
    assert output_lines(log, "FRESH") == ["FRESH"]
    for label in ("$HOME/.cargo", "~/.m2", "C:\\Users\\appveyor\\.ivy2", "/tmp/kept-tool"):
        assert f"Updating build cache entry '{label}'" in log, log
    assert "+ echo still traced" in log  # the build's set -x holds after the cache's own commands ...
    assert "tar " not in log and "sha256sum" not in log and "__conveyor" not in log  # ... which never show

    log = successful_log(project)
    assert output_lines(log, "RESTORED") == ["RESTORED"], log
    for line in ("crate-1", "jar-1", "ivy-1", "tool-1"):
        assert output_lines(log, line) == [line], log
    assert "Build cache entry '$HOME/.cargo' is up to date" in log


@pytest.mark.skipif(not AS_ROOT, reason="as another user, the runner and the build are that user to the kernel")
def test_an_entry_naming_the_runners_memory_or_environment_saves_nothing(make_project) -> None:  # type: ignore[no-untyped-def]
    # the runner is PID 1 of the sandbox, and the job's user: the runner itself reading these would hand the job
    # its job token; the job's own tar may not read them (the runner is not dumpable)
    yml = appveyor_yml(
        "cache:",
        "  - /proc/1/environ",
        "  - /proc/1/mem",
        "install:",
        "  - 'test -e /proc/1/environ && echo PRESENT || echo ABSENT'",
        "build_script:",
        "  - echo built",
    )
    project: BuildProject = make_project({"appveyor.yml": yml})

    log = successful_log(project)
    for label in ("/proc/1/environ", "/proc/1/mem"):
        assert f"Build cache entry '{label}' could not be read: the job's tar failed; not saved" in log, log
    second = project.run()
    assert "Cache entry '/proc/1/environ' not found" in project.log(second["jobs"][0]["jobId"])


# a tar the job defines: what it is asked to write with -czf is the forged archive instead
FORGING_TAR = (
    'tar() { local previous= argument; for argument; do if [ "$previous" = -czf ]; then cp /tmp/forged.tgz '
    '"$argument"; return; fi; previous=$argument; done; command tar "$@"; }'
)


def forged_archive(target: str) -> bytes:
    """What a job's own ``tar`` may hand the runner as its cache (names relative to the entry's folder, /tmp): a
    file of its own, members leading out with ``..``, an absolute name, and a link followed by a member through it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        names = ("forged/kept", f"forged/../../{target}/climbed", f"/tmp/forged/../../{target}/absolute")
        for name in (*names, "forged/link/through-link"):
            if name.endswith("through-link"):
                link = tarfile.TarInfo("forged/link")
                link.type, link.linkname = tarfile.SYMTYPE, f"/{target}"
                archive.addfile(link)
            data = b"planted by a forged cache\n" if name != "forged/kept" else b"restored from the forged cache\n"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_forged_cache_archive_plants_nothing_where_the_job_may_not_write(make_project) -> None:  # type: ignore[no-untyped-def]
    # the job's first build replaces tar for the cache's save with its own, which hands over a forged archive; the
    # next build restores it with the real tar, as the job's user: nothing lands outside what that user may write
    target = "usr/lib/conveyor-planted"  # the machine's, read-only to builds
    project: BuildProject = make_project(
        {
            "forged.tgz.b64": base64.b64encode(forged_archive(target)).decode() + "\n",
            "appveyor.yml": appveyor_yml(
                "cache:",
                "  - /tmp/forged",
                "install:",
                f"  - find /{target} -mindepth 1 2>/dev/null | sed s/^/PLANTED-/",
                "  - cat /tmp/forged/kept || true",
                "build_script:",
                "  - mkdir -p /tmp/forged && echo mine > /tmp/forged/file",
                "  - base64 -d forged.tgz.b64 > /tmp/forged.tgz",
                "on_success:",
                # from now on, the cache's tar -czf writes the forged archive instead (a job may define anything)
                f"  - '{FORGING_TAR}'",
            ),
        }
    )

    log = successful_log(project)
    assert "Updating build cache entry '/tmp/forged'" in log, log

    log = successful_log(project)
    assert "Restoring build cache entry '/tmp/forged'" in log, log
    assert output_lines(log, "restored from") == ["restored from the forged cache"], log  # it was extracted
    assert output_lines(log, "PLANTED-") == [], log
    assert not Path("/", target).exists()


def test_a_link_the_job_puts_where_the_cache_is_exchanged_leads_nothing_out(make_project) -> None:  # type: ignore[no-untyped-def]
    # the folder the runner and the job's shell share lies beside the build folder: a link put there is removed,
    # never followed, and what it pointed to is left as it was
    yml = appveyor_yml(
        "cache:",
        "  - ~/.cargo",
        "install:",
        "  - 'test -f ~/.cargo/kept && echo RESTORED || true'",
        "build_script:",
        "  - mkdir -p ~/.cargo /tmp/aside && echo kept > ~/.cargo/kept && echo mine > /tmp/aside/file",
        "on_success:",
        '  - ln -sfn /tmp/aside "$APPVEYOR_BUILD_FOLDER/../.conveyor-cache"',
        "on_finish:",
        "  - ls -A /tmp/aside | sed s/^/ASIDE-/",
    )
    project: BuildProject = make_project({"appveyor.yml": yml})

    log = successful_log(project)
    assert "Updating build cache entry '~/.cargo'" in log, log
    assert output_lines(log, "ASIDE-") == ["ASIDE-file"], log
    second = project.run()
    assert output_lines(project.log(second["jobs"][0]["jobId"]), "RESTORED") == ["RESTORED"]
