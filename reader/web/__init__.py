"""The web page (reader serve): the FastAPI app, its routes, and the read models they show."""
