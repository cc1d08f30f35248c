"""The merchant backoffice's shared package, in sub-packages by concern; each imports only those above it
(tests/unit/test_import_graph.py keeps the rules, docs/architecture.md shows them):

core -> data -> access -> domain -> edge -> routers (admin) / storefront -> hosting."""
