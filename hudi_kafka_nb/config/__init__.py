"""The sink's settings: `SinkConfig` and its defaults, how they are given and checked (notebooks 00–04)."""
