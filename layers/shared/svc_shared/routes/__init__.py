"""The platform API's routes, one module per function group, each function's handler only serving them:
Router modules for the JSON routes and pages (`accounts`, `analytics`, `billing`, `connections`,
`integrations`, `provision`, built into a resolver by `web.create_app`), and the hosted backoffice's hand-off (`shops`), which
answers its one proxy path without a resolver.

Imports nothing itself: a function importing one module here loads only what that module needs (the shops
function never loads Powertools' event handler)."""
