"""What Kafka's records hold: JSON, Avro, JSON Schema and Protobuf through a registry, change events, routing to tables
(notebooks 06–12)."""
