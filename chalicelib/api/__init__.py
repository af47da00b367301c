"""HTTP layer: routes.py names every endpoint and its view; one module of views per resource, each view parsing,
calling one domain function and shaping the answer."""
