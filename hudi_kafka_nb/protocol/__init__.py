"""The protocol in memory: the participant's and the coordinator's states and decisions, and the table-services role
(notebooks 14–30). It imports neither the table nor Kafka: only their ports."""
