"""The job protocol's shared types, owned by neither side: what the control plane hands a runner (the ticket, the
job's spec), the log's form both write (masked lines in numbered chunks), an attempt at a job as the code running
it sees it (a build job's runner, the service's own deployment jobs) and the artifact types both accept. It imports
nothing of the runner or of the control plane, and both import it."""
