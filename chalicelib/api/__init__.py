"""HTTP layer: one Blueprint per resource; views parse, call one domain function, shape the answer."""
