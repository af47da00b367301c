"""Azure Repos (AppVeyor's ``vso``): ``organisation/project`` names the repository of the project's own name."""

from __future__ import annotations

from chalicelib.core.repository_names import repository_title
from chalicelib.scm.forge import Forge


class AzureRepos(Forge):
    """Azure Repos' clone URLs, https://dev.azure.com/<organisation>/<project>/_git/<repository>."""

    def https_url(self, base: str, name: str) -> str:
        """``organisation/project``'s repository of the project's name."""
        organisation, _, project = name.partition("/")
        return f"{base}/{organisation}/{project}/_git/{repository_title(name)}"


AZURE_REPOS = AzureRepos("vso", "Azure Repos", public_host="https://dev.azure.com", deploy_keys=False)
