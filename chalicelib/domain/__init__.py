"""Use cases and rules. Imports no Chalice: callers pass plain values and get records or errors."""
