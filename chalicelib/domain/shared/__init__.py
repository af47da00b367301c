"""What every context uses: input rules, secret values at rest, messages owed after a write, the warm cache."""
