"""Adapters for the providers the service talks to (repo_host, db_host, static_host, checkout, the AI
builder). Base URLs are configuration: production talks to the providers, development to the sandbox."""
