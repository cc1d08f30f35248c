"""`python -m svc_local` starts the local stack."""

from svc_local.stack import main

raise SystemExit(main())
