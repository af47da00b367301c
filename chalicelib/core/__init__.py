"""The bottom layer: entities, statuses and value types that every layer above shares; it imports none of them."""
