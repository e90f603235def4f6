"""The gate every request passes before any endpoint: the API key first, then a capped body.

`RequestGate` is ASGI middleware. For every path but the public ones (``/health``, the OpenAPI document and its
pages) it verifies the ``Bearer`` key **before a single byte of the body is read** (a request without a valid key
is answered 401 and its body is never received), and keeps the verified key in the request's state, where the
endpoints' dependencies find it (`reviewdepth.api.auth.verified_key`). Then it bounds the body by its content
type: a ``Content-Length`` over the limit is refused at once, and a streamed body on the first byte past the limit
(`BodyTooLarge`, 413), whatever the endpoint does with it.

Browsers (the dashboard at ``/`` and the pages it links to) cannot easily send a header: on GET and HEAD requests
without an ``Authorization`` header the key is also taken from the ``reviewdepth_key`` cookie, and ``GET /?key=KEY``
verifies KEY, sets that cookie (HttpOnly, SameSite=Strict, Secure over HTTPS, for the browser session) and answers
303 to ``/`` without the key, so the address bar, the history and later ``Referer`` headers do not keep it.
``GET /?logout`` clears the cookie. Only safe methods accept the cookie: a write always needs the header, so a
page elsewhere cannot make a browser write with it.

Every response leaves with ``X-Content-Type-Options: nosniff``, and every HTML response (the report) with a
Content-Security-Policy that allows nothing but its own inline styles, ``data:`` images and forms sent to this
server (the dashboard's filter and the sign-in page are GET forms, no script): the report is
self-contained (inline CSS and SVG, no scripts), so a script in it (say, from a document id) would not run. The
interactive API pages (``/docs``, ``/redoc``: Swagger UI and ReDoc, their files served by this server,
`reviewdepth.api.docs_pages`) start with an inline script; they get no CSP.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from reviewdepth.api.problems import (
    ASGIApp,
    BodyTooLarge,
    BodyTooSlow,
    Message,
    Receive,
    Scope,
    Send,
    problem_response,
    transient_database_response,
)
from reviewdepth.services.admin.keys import authenticate, key_digest
from reviewdepth.services.evidence.access import KeyRecord

if TYPE_CHECKING:
    from reviewdepth.api.key_cache import KeyCache
    from reviewdepth.api.settings import ApiSettings

KEY_STATE = "reviewdepth_key"  # request.state member holding the verified `KeyRecord`
CHALLENGE = [(b"www-authenticate", b'Bearer realm="reviewdepth"')]
INVALID = [(b"www-authenticate", b'Bearer realm="reviewdepth", error="invalid_token"')]
NOSNIFF = (b"x-content-type-options", b"nosniff")
HTML_POLICY = (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
               b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
# files sent as the body (runs, review-platform files to import): the upload limit, not the JSON one
TEXT_TYPES = frozenset({b"text/plain", b"application/octet-stream", b"text/csv", b"text/tab-separated-values",
                        b"application/x-research-info-systems", b"application/zip",
                        b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"})
KEY_COOKIE = "reviewdepth_key"
DASHBOARD = "/"
SAFE_METHODS = frozenset({"GET", "HEAD"})
SIGN_IN_PAGE = (
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
    "content=\"width=device-width, initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">"
    "<title>reviewdepth: sign in</title><style>"
    "body{{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:40em;color:#222;line-height:1.4}}"
    "h1{{font-size:1.4em}}.status{{background:#fff1c2;color:#6b4e00;padding:.4em .7em;border-radius:.3em}}"
    "form{{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin:1em 0}}"
    "input[type=password]{{flex:1 1 14em;min-width:0;font:inherit;padding:.3em .5em}}button{{font:inherit;"
    "padding:.3em 1em}}code{{overflow-wrap:anywhere}}.small{{font-size:.9em;color:#555}}</style></head><body>"
    "<h1>reviewdepth: sign in</h1><p class=\"status\">{detail}.</p>"
    "<p>The dashboard needs an API key; a <code>read</code> key is enough. Whoever runs this server makes one "
    "with <code>reviewdepth keys create --reviewer NAME --scope read</code> (it is shown once).</p>"
    "<form method=\"get\" action=\"{action}\">{hidden}<label for=\"key\">API key</label>"
    "<input type=\"password\" id=\"key\" name=\"key\" required autocomplete=\"current-password\">"
    "<button type=\"submit\">Sign in</button></form>"
    "<p class=\"small\">Or open <code>/?key=YOUR_KEY</code> once. Either way the key is then kept in a cookie for "
    "this browser session (HttpOnly: no script can read it) and removed from the address at once; "
    "<code>/?logout</code> forgets it. Programs send the header <code>Authorization: Bearer YOUR_KEY</code> "
    "instead (the API's pages: <a href=\"{docs}\">/docs</a>).</p></body></html>\n")
MULTIPART = b"multipart/form-data"


def _cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    from starlette.requests import cookie_parser

    for header, value in headers:
        if header == b"cookie":
            found = cookie_parser(value.decode("latin-1")).get(name)
            if found:
                return found
    return None


def _key_cookie(value: str, secure: bool) -> tuple[bytes, bytes]:
    attributes = "; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
    if not value:
        attributes += "; Max-Age=0"
    return b"set-cookie", f"{KEY_COOKIE}={value}{attributes}".encode("latin-1")


def _redirect(scope: Scope, query: list[tuple[str, str]], cookie: tuple[bytes, bytes]) -> ASGIApp:
    location = scope.get("root_path", "") + DASHBOARD + (f"?{urlencode(query)}" if query else "")
    response = Response(status_code=303, headers={"location": location, "cache-control": "no-store",
                                                  "referrer-policy": "no-referrer"})
    response.raw_headers.append(cookie)
    return response


class BodyLimits:
    """The byte limits of `ApiSettings` by content type."""

    def __init__(self, settings: ApiSettings) -> None:
        self.json = settings.max_body_bytes
        self.text = settings.text_limit
        self.multipart = settings.multipart_limit

    def for_type(self, content_type: bytes) -> tuple[int, str]:
        """The limit for a body of ``content_type`` (media type only, lower case) and the setting that sets it."""
        if content_type in TEXT_TYPES:
            return self.text, "REVIEWDEPTH_MAX_TEXT_BYTES"
        if content_type == MULTIPART:
            return self.multipart, "REVIEWDEPTH_MAX_MULTIPART_BYTES"
        # JSON, and anything else (refused by the endpoint as 415 or 422, read up to this limit at most)
        return self.json, "REVIEWDEPTH_MAX_BODY_BYTES"


def _unauthorised(detail: str, headers: list[tuple[bytes, bytes]]) -> ASGIApp:
    response = problem_response(401, detail)
    response.raw_headers.extend(headers)
    return response


class RequestGate:
    """ASGI middleware: authenticate, then cap the body (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: ApiSettings, public_paths: Collection[str],
                 pages_without_policy: Collection[str] = ()) -> None:
        self.app = app
        self.limits = BodyLimits(settings)
        self.body_timeout_seconds = settings.body_timeout_seconds
        self.public_paths = frozenset(public_paths)
        self.pages_without_policy = frozenset(pages_without_policy)

    async def _key(self, scope: Scope, authorization: bytes) -> KeyRecord | ASGIApp:
        """The verified key of the ``Authorization`` header, or the response to send: 401, or 503 when the
        database is busy or unavailable (middleware errors never reach the endpoints' exception handlers)."""
        scheme, _, secret_bytes = authorization.partition(b" ")
        secret = secret_bytes.strip().decode("latin-1")
        if not secret or scheme.lower() != b"bearer":
            return _unauthorised("missing API key: send 'Authorization: Bearer <key>'", CHALLENGE)
        state = scope["app"].state
        cache: KeyCache = state.key_cache  # looked up per request: a test may swap it
        digest = key_digest(secret)
        key = cache.get(digest)
        if key is not None:
            return key
        generation = cache.generation
        try:
            key = await run_in_threadpool(authenticate, state.engine, secret)
        except Exception as exc:
            unavailable = transient_database_response(exc, scope)
            if unavailable is None:
                raise
            return unavailable
        if key is None:
            return _unauthorised("unknown API key", INVALID)
        if not key.active:
            return _unauthorised(f"API key {key.prefix}… (id {key.id}) was revoked", INVALID)
        cache.put(digest, key, generation)
        return key

    async def _browser(self, scope: Scope) -> ASGIApp | None:
        """``GET /?key=KEY``: the 303 that keeps KEY in a cookie (or the 401); ``GET /?logout``: the 303 that
        clears it; None for any other request."""
        if scope["path"] != DASHBOARD:
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        names = {name for name, _ in query}
        secure = scope.get("scheme") == "https"
        rest = [(name, value) for name, value in query if name not in ("key", "logout")]
        if "logout" in names:
            return _redirect(scope, rest, _key_cookie("", secure))
        if "key" not in names:
            return None
        secret = [value for name, value in query if name == "key"][-1]
        key = await self._key(scope, b"Bearer " + secret.encode("latin-1", "replace"))
        if not isinstance(key, KeyRecord):
            return self._sign_in_page(scope, key)
        return _redirect(scope, rest, _key_cookie(secret, secure))

    def _sign_in_page(self, scope: Scope, refusal: ASGIApp) -> ASGIApp:
        """The 401 of the dashboard as a page for a browser: its problem detail, how to give a key, and a form
        that sends one to ``/?key=`` (a GET: the same sign-in as a typed address, the dashboard's query kept).
        Still 401, with the challenge: the dashboard was refused, and a probe or a script must not read it as
        up and signed in."""
        accept = b"".join(value for name, value in scope["headers"] if name == b"accept")
        if scope["path"] != DASHBOARD or b"text/html" not in accept or not isinstance(refusal, Response) \
                or refusal.status_code != 401:
            return refusal
        import json
        from html import escape

        from starlette.responses import HTMLResponse

        detail = str(json.loads(bytes(refusal.body)).get("detail") or "an API key is needed")
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        hidden = "".join(f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">'
                         for name, value in query if name not in ("key", "logout"))
        root = scope.get("root_path", "")
        page = HTMLResponse(SIGN_IN_PAGE.format(detail=escape(detail), action=escape(root + DASHBOARD),
                                                hidden=hidden, docs=escape(root + "/docs")),
                            status_code=refusal.status_code)
        page.raw_headers.extend(h for h in refusal.raw_headers
                                if h[0] in (b"www-authenticate", b"set-cookie"))
        return page

    async def __call__(self, scope: Scope, receive: Receive, respond: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, respond)
            return
        policy = scope["path"] not in self.pages_without_policy

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                if NOSNIFF not in headers:  # a 500 body brings its own (see problems.install_problem_handlers)
                    headers.append(NOSNIFF)
                if policy and any(name == b"content-type" and value.startswith(b"text/html")
                                  for name, value in headers):
                    headers.append(HTML_POLICY)
                message["headers"] = headers
            await respond(message)

        content_type = b""
        declared = b""
        authorization = b""
        for name, value in scope["headers"]:
            if name == b"content-type":
                content_type = value
            elif name == b"content-length":
                declared = value
            elif name == b"authorization":
                authorization = value
        if scope["path"] not in self.public_paths:
            from_cookie = False
            if not authorization and scope["method"] in SAFE_METHODS:
                browser = await self._browser(scope)
                if browser is not None:
                    await browser(scope, receive, send)
                    return
                secret = _cookie(scope["headers"], KEY_COOKIE)
                if secret is not None:
                    authorization, from_cookie = b"Bearer " + secret.encode("latin-1", "replace"), True
            key = await self._key(scope, authorization)
            if not isinstance(key, KeyRecord):
                if from_cookie and isinstance(key, Response) and key.status_code == 401:  # unknown or revoked
                    key.raw_headers.append(_key_cookie("", scope.get("scheme") == "https"))
                await self._sign_in_page(scope, key)(scope, receive, send)
                return
            scope.setdefault("state", {})[KEY_STATE] = key
        limit, setting = self.limits.for_type(content_type.split(b";", 1)[0].strip().lower())
        if declared.isdigit() and int(declared) > limit:
            await problem_response(413, f"request body of {int(declared):,} bytes is larger than the limit of "
                                        f"{limit:,} bytes ({setting})")(scope, receive, send)
            return
        received = 0
        body_done = False

        async def limited() -> Message:
            nonlocal received, body_done
            if body_done:  # past the body, a receive waits for the client to leave: no bound
                return await receive()
            try:
                with anyio.fail_after(self.body_timeout_seconds):
                    message = await receive()
            except TimeoutError:
                raise BodyTooSlow(self.body_timeout_seconds) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, setting)
                body_done = not message.get("more_body", False)
            else:
                body_done = True
            return message

        await self.app(scope, limited, send)
