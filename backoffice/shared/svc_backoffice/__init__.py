"""Shared package of the merchant backoffice functions: configuration, database, sessions, role gate, domain
logic and the route table."""
