"""Adapters for the providers the service talks to (repo_host, db_host, static_host, checkout, the AI
builder). Base URLs are configuration: production talks to the providers, development to the sandbox."""

# How the product names each provider to a person (messages, the workspace); code and data use the keys.
LABELS = {
    "repo_host": "GitHub",
    "db_host": "Supabase",
    "static_host": "Netlify",
    "checkout": "Stripe",
    "builder": "The site builder",
}


def label(provider: str) -> str:
    return LABELS.get(provider, provider)
