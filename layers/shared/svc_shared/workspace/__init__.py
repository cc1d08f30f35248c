"""The workspace pages a merchant uses after signing in: home, connections, a project (publish), MCP access.

`views` gathers what each page shows from the services; `render` turns it into HTML with Jinja2 templates
(autoescaped) and the page's security headers; `site` is what every route shares (the signed-in user, the
checked form, the error pages) and `routes` holds the routers, one per page group."""
