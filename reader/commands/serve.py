"""`reader serve`: the web page for uploading papers and reading their audited analyses."""

from __future__ import annotations

import click

from reader.errors import ConfigError


def check_bind(host: str, allow_remote: bool, token: str | None, accounts: bool = False) -> list[str]:
    """Refuse a non-loopback address unless asked for explicitly; return the warnings to print."""
    from reader.web.security import is_loopback

    if is_loopback(host):
        return []
    if not allow_remote:
        raise ConfigError(
            f"--host {host} would expose the library beyond this machine; pass --allow-remote "
            f"to do it anyway (and set READER_WEB_TOKEN so only people with the token get in)."
        )
    if accounts:
        return [f"Serving on {host}: people sign in with their accounts (reader user list shows them)."]
    warnings = [f"Warning: serving on {host}: anyone who can reach this address can use the app."]
    if token:
        warnings.append("Access needs the token: open the page once with ?token=<READER_WEB_TOKEN>.")
    else:
        warnings.append("Warning: READER_WEB_TOKEN is not set, so there is no access control at all.")
    return warnings


def check_accounts(app, accounts: bool) -> None:
    """Refuse to serve with accounts when there are none, or with READER_WEB_TOKEN as well."""
    if not accounts:
        return
    if app.settings.web_token:
        raise ConfigError(
            "READER_WEB_TOKEN is set and accounts are asked for: use one of them "
            "(unset READER_WEB_TOKEN to serve with accounts)."
        )
    if not app.accounts.list():
        raise ConfigError("--accounts: there are no accounts yet; add one with `reader user add NAME`.")


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; anything but loopback also needs --allow-remote.",
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port (0 picks a free one).",
)
@click.option(
    "--allow-remote", is_flag=True, help="Allow binding to a non-loopback address (prints a warning)."
)
@click.option(
    "--accounts",
    is_flag=True,
    help="People sign in with the accounts of `reader user add`, each with their own judgements and "
    "highlights (READER_WEB_ACCOUNTS=on for every run).",
)
@click.pass_obj
def serve(app, host, port, allow_remote, accounts):
    """Serve the web page: upload PDFs, follow reviews, read audited analyses, ask questions.

    \b
    Examples:
      reader serve                          # http://127.0.0.1:8000
      reader serve --port 8765
      READER_WEB_TOKEN=s3cret reader serve --host 0.0.0.0 --allow-remote
      reader user add ada && reader serve --accounts --host 0.0.0.0 --allow-remote

    Uploads are limited to READER_UPLOAD_LIMIT_MB per file (default 50).
    """
    import socket

    import uvicorn

    from reader.web.app import create_app
    from reader.web.security import is_loopback, served_host_names

    host = host.strip("[]")
    accounts = accounts or app.settings.web_accounts
    check_accounts(app, accounts)
    for line in check_bind(host, allow_remote, app.settings.web_token, accounts):
        click.echo(line, err=True)
    # On loopback, only loopback Host headers are served (stops DNS-rebinding pages).
    allowed = served_host_names(host) if is_loopback(host) else None
    web = create_app(app, allowed_hosts=allowed, accounts=accounts)

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait in the backlog until the app is up
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port") from None
    shown_host = f"[{host}]" if ":" in host else host
    click.echo(
        f"reader is serving on http://{shown_host}:{sock.getsockname()[1]}/ (Ctrl-C to stop)", err=True
    )
    config = uvicorn.Config(web, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
