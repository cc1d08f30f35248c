"""What every other part stands on: domain errors, clock, logging, settings, AWS clients, metrics, secrets, tokens and hashing, envelope encryption, JSON and path checks, names."""
