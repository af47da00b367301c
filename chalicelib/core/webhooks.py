"""The forges whose webhooks Conveyor reads (each forge's ``webhook`` in scm/forges/), each at a route of its own
(api/routes.py).

Named here, below both, so that declaring the routes loads no payload reader: every function's cold start declares
them (docs/architecture.md, "What a cold start loads"). tests/unit/scm/forges/test_registry.py holds it to the forges'.
"""

from __future__ import annotations

WEBHOOK_PROVIDERS = ("github", "gitea", "gitlab", "bitbucket", "git")
