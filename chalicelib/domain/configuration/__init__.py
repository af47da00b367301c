"""appveyor.yml and a Configuration: reading, writing, the matrix, filters, for: items; pure, no IO."""
