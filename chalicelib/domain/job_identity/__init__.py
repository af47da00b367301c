"""Who a job is: its runner's job token and lease, and the OpenID Connect ID tokens it may ask for."""
