"""The web page's routes, one router per page group; create_app (reader/web/app.py) includes them."""
