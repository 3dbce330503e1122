"""The web page: `create_app(ctx)` in reader.web.app; served by `reader serve`."""
