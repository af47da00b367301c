"""The job protocol's service side: what a runner holding a job token may read and report."""
