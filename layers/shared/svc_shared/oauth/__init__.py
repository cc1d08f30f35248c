"""The tool server's OAuth 2.1 authorization server: metadata, client registration, codes and tokens."""
