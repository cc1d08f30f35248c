"""Docker-free local stack: gateway, embedded AWS with a Lambda invoke endpoint, provider sandbox and
PostgreSQL."""
