"""What everything else stands on: the message catalogue, the domain errors, the shop being served (tenancy),
the settings and the log."""
