"""Deploying to AWS: the CloudFormation merged over Chalice's template, and ``make package``, which builds both."""
