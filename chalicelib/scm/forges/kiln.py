"""Kiln: its repositories, cloned from its public host; no webhook, no commit statuses."""

from __future__ import annotations

from chalicelib.scm.forge import Forge

KILN = Forge("kiln", "Kiln", public_host="https://kilnhg.com")
