"""Who may enter: the sign-in hand-off from the platform, the session cookie, the signed-in staff member and
the roles."""
