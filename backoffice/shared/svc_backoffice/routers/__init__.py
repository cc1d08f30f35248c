"""One Router per resource; each route body is one call into the domain modules."""
