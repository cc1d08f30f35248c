"""The HTTP edge: the resolver, the one error table, the CSRF and role gate, request parsing, the router that
declares each route once, the route table and the OpenAPI document."""
