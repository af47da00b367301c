"""A build's tests: the result files its jobs send, each test's history and flakiness, and the quarantine."""
