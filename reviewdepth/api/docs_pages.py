"""The interactive API pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), with their scripts, style sheet and
icon served by this application from the files of the `fastapi-offline` package (its ``static/`` folder, installed
with reviewdepth): no CDN, nothing fetched at run time, so the pages work on a machine without the internet.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (a blank page offline), so `create_app` turns them off
and calls `install_docs_pages`, which adds the same pages (FastAPI's HTML, pointed at the local files) and one
route per file. Every path it adds is public, as the OpenAPI document is: the gate lets them through without a key.
The one thing a bundle would fetch from elsewhere by itself (ReDoc's menu logo) is rewritten away (`REWRITES`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.requests import Request
from starlette.responses import FileResponse, Response

ASSET_PATH = "/docs/assets/"
# file name in fastapi-offline's static/ → its media type
ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8",
          "redoc.standalone.js": "text/javascript; charset=utf-8", "favicon.png": "image/png"}
# Swagger UI asks validator.swagger.io about a document served from a public host: not from here
SWAGGER_PARAMETERS = {"validatorUrl": None}
ASSET_CACHE = "public, max-age=86400"
# what a bundle would fetch from elsewhere by itself, and what it gets instead: ReDoc 2's menu shows Redocly's logo
# from its CDN (an image that hides itself when it fails to load); an empty source fails at once, asking no one
REWRITES: dict[str, tuple[tuple[bytes, bytes], ...]] = {
    "redoc.standalone.js": ((b'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"', b'src:""'),)}


@functools.cache
def asset_folder() -> Path:
    """fastapi-offline's ``static/`` folder (Swagger UI's bundle and CSS, ReDoc's standalone bundle, an icon)."""
    import importlib.util

    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the fastapi-offline package (a dependency of reviewdepth) is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


@functools.cache
def rewritten(name: str) -> bytes:
    """The bytes of asset ``name`` with its `REWRITES` made (read once per process)."""
    data = (asset_folder() / name).read_bytes()
    for old, new in REWRITES.get(name, ()):
        data = data.replace(old, new)
    return data


@dataclass(frozen=True)
class DocsPaths:
    """The paths `install_docs_pages` added: ``public`` (every one: no key needed) and ``pages`` (the HTML pages,
    whose inline start-up script the HTML Content-Security-Policy would block)."""

    public: frozenset[str]
    pages: frozenset[str]


def base_path(request: Request) -> str:
    """The path the application is mounted at (behind a proxy's prefix), without a trailing slash."""
    return str(request.scope.get("root_path", "")).rstrip("/")


async def swagger_ui(request: Request) -> Response:
    """Swagger UI over the application's OpenAPI document, its files from this server."""
    app: FastAPI = request.app
    base = base_path(request)
    return get_swagger_ui_html(
        openapi_url=base + (app.openapi_url or "/openapi.json"), title=f"{app.title} - Swagger UI",
        swagger_js_url=f"{base}{ASSET_PATH}swagger-ui-bundle.js",
        swagger_css_url=f"{base}{ASSET_PATH}swagger-ui.css", swagger_favicon_url=f"{base}{ASSET_PATH}favicon.png",
        oauth2_redirect_url=base + app.state.oauth2_redirect_url,
        swagger_ui_parameters={**(app.swagger_ui_parameters or {}), **SWAGGER_PARAMETERS})


async def swagger_ui_redirect(request: Request) -> Response:
    """Swagger UI's OAuth2 redirect page."""
    return get_swagger_ui_oauth2_redirect_html()


async def redoc(request: Request) -> Response:
    """ReDoc over the application's OpenAPI document, its files from this server."""
    app: FastAPI = request.app
    base = base_path(request)
    return get_redoc_html(openapi_url=base + (app.openapi_url or "/openapi.json"), title=f"{app.title} - ReDoc",
                          redoc_js_url=f"{base}{ASSET_PATH}redoc.standalone.js",
                          redoc_favicon_url=f"{base}{ASSET_PATH}favicon.png", with_google_fonts=False)


async def send_asset(request: Request) -> Response:
    """One of `ASSETS`, named by the last segment of the path it is routed at (``ASSET_PATH + name``)."""
    name = request.url.path.rsplit("/", 1)[-1]
    media_type = ASSETS[name]
    if name in REWRITES:
        return Response(rewritten(name), media_type=media_type, headers={"Cache-Control": ASSET_CACHE})
    return FileResponse(asset_folder() / name, media_type=media_type, headers={"Cache-Control": ASSET_CACHE})


def install_docs_pages(app: FastAPI, docs_url: str = "/docs", redoc_url: str = "/redoc",
                       oauth2_redirect_url: str = "/docs/oauth2-redirect") -> DocsPaths:
    """Add ``docs_url``, ``redoc_url``, ``oauth2_redirect_url`` and the asset routes under `ASSET_PATH` to
    ``app`` (whose own docs pages must be off: ``docs_url=None, redoc_url=None``)."""
    folder = asset_folder()
    missing = [name for name in ASSETS if not (folder / name).is_file()]
    if missing:
        raise RuntimeError(f"fastapi-offline's {folder} lacks {', '.join(missing)}")
    app.state.oauth2_redirect_url = oauth2_redirect_url  # where Swagger UI's page sends OAuth2 logins back
    # plain Starlette routes, as FastAPI adds its own docs pages: outside the OpenAPI document and the API's
    # dependencies (they take no parameter)
    app.add_route(docs_url, swagger_ui, include_in_schema=False)
    app.add_route(oauth2_redirect_url, swagger_ui_redirect, include_in_schema=False)
    app.add_route(redoc_url, redoc, include_in_schema=False)
    for name in ASSETS:
        app.add_route(ASSET_PATH + name, send_asset, include_in_schema=False)
    pages = frozenset({docs_url, redoc_url, oauth2_redirect_url})
    return DocsPaths(public=pages | {ASSET_PATH + name for name in ASSETS}, pages=pages)
