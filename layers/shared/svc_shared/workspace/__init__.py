"""The workspace pages a merchant uses after signing in: home, connections, a project (publish), MCP access.

`views` gathers what each page shows from the services; `render` turns it into HTML with Jinja2 templates
(autoescaped) and the page's security headers; functions/workspace/app.py routes requests to them."""
