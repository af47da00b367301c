"""The JSON shapes of the API: one module per resource, both directions."""
