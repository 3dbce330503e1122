"""`reader user`: the accounts of a shared `reader serve --accounts`."""

from __future__ import annotations

import click

from reader.commands.output import echo_json, for_terminal


@click.group("user")
def user():
    """The accounts people sign in with on `reader serve --accounts`: each has its own
    judgements and highlights; the papers, audits, notes and questions are shared.

    \b
    Examples:
      reader user add ada
      reader user list
    """


@user.command("add")
@click.argument("name")
@click.pass_obj
def add(app, name):
    """Add an account. The password is asked for twice, without showing it; it is never taken
    from the command line and is kept only as an Argon2id hash.

    NAME: 1 to 64 letters, digits, '.', '_', '-' or '@'. The password: 8 characters or more.
    A script gives it on standard input, twice, one line each (from a file only it can read).

    \b
    Examples:
      reader user add ada
      reader user add ada < ada-password-twice.txt
    """
    app.accounts.check_name(name)  # before the password is asked for
    password = click.prompt(f"Password for {name}", hide_input=True, confirmation_prompt=True, err=True)
    account = app.accounts.add(name, password)
    click.echo(for_terminal(f"Added the account {account.name}: it signs in on `reader serve --accounts`."))


@user.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the accounts as JSON.")
@click.pass_obj
def list_users(app, as_json):
    """List the accounts, with when each was made and whether it is locked.

    \b
    Example:
      reader user list
    """
    found = app.accounts.list()
    if as_json:
        echo_json([a.to_json() for a in found])
        return
    if not found:
        click.echo("No accounts yet: add one with `reader user add NAME`.")
    for account in found:
        made = account.created_at.date().isoformat() if account.created_at else ""
        locked = f"  locked until {account.locked_until:%Y-%m-%d %H:%M} UTC" if account.locked_until else ""
        click.echo(for_terminal(f"{account.name}  added {made}{locked}"))


@user.command("remove")
@click.argument("name")
@click.pass_obj
def remove(app, name):
    """Remove an account: it can no longer sign in (a page open under it is refused at its next
    request). Its judgements and highlights are kept.

    \b
    Example:
      reader user remove ada
    """
    click.echo(for_terminal(f"Removed the account {app.accounts.remove(name)}."))


@user.command("unlock")
@click.argument("name")
@click.pass_obj
def unlock(app, name):
    """End an account's 10-minute lock after 5 wrong passwords.

    \b
    Example:
      reader user unlock ada
    """
    click.echo(for_terminal(f"Unlocked the account {app.accounts.unlock(name)}."))
