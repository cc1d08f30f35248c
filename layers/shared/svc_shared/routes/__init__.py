"""The platform's JSON and API routers, one module per function's route group; each function's app.py builds
its resolver from its module's `router`."""
