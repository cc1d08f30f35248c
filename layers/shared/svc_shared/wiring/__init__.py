"""How a container is put together: the services object that builds each domain service once, the base URL and origin policy it derives, and the operator CLI."""
