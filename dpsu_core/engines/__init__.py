"""Engines other than the local one. ``spark``: corpora past one machine (imports pyspark lazily, so
``import dpsu_core`` never imports it); ``keyed``: per-user sampling by keyed hashing, used by it."""
