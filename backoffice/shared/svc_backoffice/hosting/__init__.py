"""The platform's hosted backoffice: every published shop served by one deployment."""
