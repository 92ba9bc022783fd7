"""The table: its store and timeline, Spark and Hudi's writer and committer, fencing, reading it back, its catalog
(notebooks 27–29, 40–47, 52, 55)."""
