"""What every request to ``storbench serve`` passes and every response carries (ASGI middleware).

* **Host allow-list.**  A request whose ``Host`` is not the address the server is bound to,
  ``localhost`` or a name given with ``--allow-host`` (a reverse proxy's) gets 421 and nothing
  else (bound to every address, ``0.0.0.0`` or ``::``, the server answers to the machine's own
  addresses and host name, found when it starts, and to the loopback names): a page on another site that makes the browser resolve its own name to 127.0.0.1 (DNS
  rebinding) would otherwise read the loopback server's data.
* **The token** (``storbench serve --token``): ``Authorization: Bearer T`` (the scheme in any
  case), ``?token=T`` (a cookie then keeps it for the browser) or that cookie; any one of them
  that is right lets the request in, so a stale cookie never locks out the right token.
* **Headers on every response**: a Content-Security-Policy (scripts only from storbench itself,
  no inline script; a stored HTML report, which is self-contained by design, may run its own
  inline script and nothing from elsewhere), ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: same-origin`` (nothing to other sites; its own forms carry their origin, which
  the check of :func:`form_refusal` reads: under ``no-referrer`` a browser sends ``Origin: null``).

:func:`host_name` and :func:`given_tokens` are pure and tested alone.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # ASGI's own types, as starlette names them (a scope and a message hold any value)
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: pages: scripts and styles from storbench only (plotly sets element styles: inline style allowed)
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
               "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")  # fmt: skip
#: a stored report (the same file ``storbench report`` writes: plotly and its data inline), nothing from elsewhere
REPORT_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")  # fmt: skip
COOKIE = "storbench_token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The name part of a ``Host`` header, lower case: ``[::1]:8080`` -> ``::1``, ``Example:80`` -> ``example``."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


#: the binds that listen on every address of the machine
WILDCARDS = ("0.0.0.0", "::")


def allowed_hosts(bind: str, extra: Iterable[str] = (), own: Iterable[str] = ()) -> frozenset[str]:
    """The bound address, the loopback names when it is a loopback one, and ``extra`` (``--allow-host``);
    bound to every address (:data:`WILDCARDS`), the loopback names and ``own`` too (the machine's own
    addresses and names: :func:`local_addresses`, its host name)."""
    names = {host_name(bind if not (":" in bind and not bind.startswith("[")) else f"[{bind}]")}
    if names & set(LOOPBACK_NAMES) or bind in ("localhost",):
        names |= set(LOOPBACK_NAMES)
    if bind in WILDCARDS:
        names |= set(LOOPBACK_NAMES) | {host_name(f"[{o}]" if ":" in o else o) for o in own}
    names |= {host_name(e) for e in extra}
    return frozenset(n for n in names if n)


def local_addresses(fib_trie: str, if_inet6: str) -> tuple[str, ...]:
    """The machine's own addresses (its network namespace's), from ``/proc/net/fib_trie`` (each
    address followed by a ``/32 host LOCAL`` line) and ``/proc/net/if_inet6`` (32 hex digits a
    line), IPv4 first, each once. Pure."""
    import ipaddress

    lines = fib_trie.splitlines()
    v4 = [lines[i - 1].split("-- ", 1)[-1].strip() for i, line in enumerate(lines) if i and "/32 host LOCAL" in line]
    v6 = []
    for line in if_inet6.splitlines():
        word = line.split()[0] if line.split() else ""
        if len(word) == 32:
            try:
                v6.append(str(ipaddress.IPv6Address(int(word, 16))))
            except ValueError:
                continue
    return tuple(dict.fromkeys(a for a in v4 + v6 if a))


def given_tokens(headers: dict[str, str], query: dict[str, str], cookies: dict[str, str]) -> list[str]:
    """Every token a request carries: its ``Authorization: Bearer`` (scheme in any case), its
    ``?token=`` and its cookie, in that order."""
    out = []
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        out.append(value.strip())
    for v in (query.get("token"), cookies.get(COOKIE)):
        if v:
            out.append(v)
    return out


#: the per-browser token every form of the page carries (double submit: the cookie and the field agree)
CSRF_COOKIE = "storbench_csrf"


def csrf_token(cookies: dict[str, str]) -> tuple[str, bool]:
    """The browser's form token (its cookie's, else a new one) and whether it is new (then the
    response sets the cookie)."""
    import secrets

    have = cookies.get(CSRF_COOKIE, "")
    if len(have) == 32 and all(c in "0123456789abcdef" for c in have):
        return have, False
    return secrets.token_hex(16), True


def csrf_cookie(token: str) -> str:
    return f"{CSRF_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"


def form_refusal(headers: dict[str, str], cookies: dict[str, str], field: str | None, own_origin: str) -> str | None:
    """Why a submitted form is refused as cross-site, or None: the request's ``Origin`` (else its
    ``Referer``) must be this server's own, and the form's token must be the browser's cookie's. Pure."""
    origin = headers.get("origin")
    if origin is None:
        referer = headers.get("referer", "")
        origin = referer if referer == own_origin or referer.startswith(own_origin + "/") else (referer or None)
        if origin is not None and origin != own_origin and origin.startswith(own_origin + "/"):
            origin = own_origin
    if origin != own_origin:
        return f"a form sent from {str(origin)[:80]!r}, not from this server ({own_origin}): refused (cross-site request)"
    cookie = cookies.get(CSRF_COOKIE, "")
    if not field or not cookie or not hmac.compare_digest(field.encode(), cookie.encode()):
        return "the form's token does not match this browser's (an old or forged form): open the page again"
    return None


def _policy(path: str) -> str:
    return REPORT_POLICY if path == "/report" or path.endswith("/report") else PAGE_POLICY


class Guard:
    """The middleware (see the module's text) around the application ``app``."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str], token: str | None = None) -> None:
        self.app = app
        self.hosts = hosts
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse

        request = Request(scope)
        path = scope.get("path", "")
        extra = [(b"content-security-policy", _policy(path).encode()), (b"x-content-type-options", b"nosniff"),
                 (b"referrer-policy", b"same-origin")]  # fmt: skip

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        host = host_name(request.headers.get("host", ""))
        if host not in self.hosts:
            refused = PlainTextResponse(f"421: this storbench serve answers to {', '.join(sorted(self.hosts))}, not to host {host[:80]!r} "
                                        "(a reverse proxy's name: storbench serve --allow-host NAME)\n", status_code=421)  # fmt: skip
            await refused(scope, receive, send_with_headers)
            return
        if self.token is not None:
            tokens = given_tokens(dict(request.headers), dict(request.query_params), dict(request.cookies))
            if not any(hmac.compare_digest(t.encode(), self.token.encode()) for t in tokens):
                denied = PlainTextResponse("401: this storbench serve needs its token (?token=... or Authorization: Bearer ...)\n",
                                           status_code=401)  # fmt: skip
                await denied(scope, receive, send_with_headers)
                return
            if request.query_params.get("token") == self.token:
                extra.append((b"set-cookie", f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()))
        await self.app(scope, receive, send_with_headers)
