"""Shared package of the svc platform functions: configuration, logging, errors, data access and domain logic."""
