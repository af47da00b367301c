"""A build job's lifecycle: status moves, dispatch, routing, slots, job tokens, build agents, lost jobs."""
