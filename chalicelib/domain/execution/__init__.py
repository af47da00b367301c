"""A build job's lifecycle: status moves, dispatch, routing, slots, build agents, lost jobs."""
