"""Running the sink: wiring the roles to the real table and Kafka, the job entry, restarts, the supervisor, the table
host, metrics and monitoring (notebooks 53–64). The only part that imports all the others."""
