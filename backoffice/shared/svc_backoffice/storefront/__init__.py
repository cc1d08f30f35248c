"""The shop's public storefront: its session-less API (`/api/storefront/`, docs/storefront-api.md) over the
catalog and commerce tables, and the checkout that reserves stock and sends the shopper to the card
provider's hosted page (domain/card_provider.py). The card provider's connect flow is domain/card_connect.py
(routers/card.py), the storefront site's rebuilds domain/site_builds.py."""
