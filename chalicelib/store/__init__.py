"""The only package that knows PynamoDB and S3: one module per aggregate, named for its queries."""
