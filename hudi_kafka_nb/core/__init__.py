"""What the roles and the adapters share: the control topic's messages and the ports the roles do I/O through
(notebooks 05 and 13)."""
