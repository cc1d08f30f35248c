"""The HTTP edge shared by the functions' routers: the resolver, its error table and request helpers, the sign-in pages."""
