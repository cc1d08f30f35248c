"""One router module per function group, each route body one call into the domain modules; `table` holds every
router by function (the route table, the OpenAPI document's router, the generated docs); `actions` declares a
resource's actions on one row (publish a post, move an order)."""
