"""Kafka: the control channel and the data consumer, dead letters, rights and the checks before a role starts
(notebooks 48–51)."""
