"""The web page (reader serve): the FastAPI app, its routes, and the read models they show."""


def read(db, read_model, *args, **kwargs):
    """A read model's answer (`read_model(session, ...)`) over one session of the database `db`."""
    with db() as session:
        return read_model(session, *args, **kwargs)
