"""The backoffice's logic, one module per domain (catalog; inventory, search, settings and staff in store;
commerce, shipping, payments, blog, integrations), and the request models callers send it (models/)."""
