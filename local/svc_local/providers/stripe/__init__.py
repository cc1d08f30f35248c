"""The card provider sandbox (Stripe shape): Checkout Sessions and their hosted page (sessions.py), Connect
OAuth and webhook endpoints (connect.py), signed event deliveries (events.py), forms and errors (forms.py),
all served by `Stripe` (provider.py)."""

from svc_local.providers.stripe.forms import parse_form
from svc_local.providers.stripe.provider import Stripe

__all__ = ["Stripe", "parse_form"]
