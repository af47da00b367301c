"""Repositories named by their clone URL rather than owner/repo on a forge's server: plain git (with the generic
webhook any server can send), and Mercurial and Subversion, which projects may name but Conveyor does not build."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.scm.forge import Forge
from chalicelib.scm.hook_events import HookEvent, ref_event, text


class PlainGit(Forge):
    """Any git server: GitHub's pull refs, if it keeps them, and the generic webhook."""

    def hook_event(self, headers: Mapping[str, str], body: dict[str, Any]) -> HookEvent:
        """``{"ref": "refs/heads/<branch>", "commit": "<sha>"}``; ``config`` (an appveyor.yml) is not used."""
        commit_id = text(body.get("commit")) or text(body.get("after")) or None
        return ref_event(body.get("ref"), commit_id)


GIT = PlainGit("git", "Git", by_url=True, merge_refs=True, webhook="git")
MERCURIAL = Forge("mercurial", "Mercurial", scm="mercurial", by_url=True)
SUBVERSION = Forge("subversion", "Subversion", scm="subversion", by_url=True)
