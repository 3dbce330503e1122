"""Signing in and out on a `reader serve --accounts` server (reader/web/sign_in.py keeps the
sessions; reader.accounts checks the password and locks a name after 5 wrong ones). The
sign-in form passes the same checks as every form (reader/web/security.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse

from reader.web.pages import forged, page, reader_of, user_of, wants_json
from reader.web.security import ACCOUNT_COOKIE
from reader.web.sign_in import local_path

router = APIRouter()
NO_ACCOUNTS = "This reader server has no accounts: nothing to sign in to (reader serve --accounts has them)."


def _signed_in(request: Request):
    """The server's sessions (reader.web.sign_in.SignedIn), None without accounts."""
    return request.app.state.signed_in


@router.get("/login")
def login_page(request: Request, next: str = ""):
    if _signed_in(request) is None:
        return page(request, "error.html", 404, message=NO_ACCOUNTS)
    if user_of(request) is not None:
        return RedirectResponse(local_path(next), status_code=303)
    return page(request, "login.html", next=local_path(next), account_name="", message="", nav="login")


@router.post("/login")
async def login(
    request: Request,
    csrf_token: str = Form(""),
    name: str = Form(""),
    password: str = Form(""),
    next: str = Form(""),
    ctx=Depends(reader_of),
):
    sessions = _signed_in(request)
    if sessions is None:
        return page(request, "error.html", 404, message=NO_ACCOUNTS)
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    login = await run_in_threadpool(ctx.accounts.verify_login, name, password)
    throttle = request.app.state.throttle
    address = request.client.host if request.client else ""
    if not login.passed:
        await throttle.failed(address)
        if wants_json(request):
            return JSONResponse({"error": login.message()}, status_code=401)
        shown = {
            "next": local_path(next),
            "account_name": name[:64],
            "message": login.message(),
            "nav": "login",
        }
        return page(request, "login.html", 401, **shown)
    throttle.passed(address)
    response = (
        JSONResponse({"signed_in": login.name})
        if wants_json(request)
        else RedirectResponse(local_path(next), status_code=303)
    )
    secure = request.url.scheme == "https"
    response.set_cookie(
        ACCOUNT_COOKIE, sessions.start(login.name), httponly=True, samesite="lax", secure=secure, path="/"
    )
    return response


@router.post("/logout")
def logout(request: Request, csrf_token: str = Form("")):
    sessions = _signed_in(request)
    if sessions is None:
        return page(request, "error.html", 404, message=NO_ACCOUNTS)
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    sessions.end(request.cookies.get(ACCOUNT_COOKIE))
    if wants_json(request):
        response = JSONResponse({"signed_out": True})
    else:
        response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(ACCOUNT_COOKIE, path="/", httponly=True, samesite="lax")
    return response
