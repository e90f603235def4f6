"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) load every file from this server (fastapi-offline's copies), none
from a CDN: offline they still work. The pages and their files need no key, like the OpenAPI document. (The
pages' scripts run in a real browser in test_browser_pages.py.)"""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.api.docs_pages import ASSET_PATH, REWRITES, asset_folder, rewritten

from .conftest import Api

URL_ATTRIBUTE = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)


def referenced(html: str) -> list[str]:
    """Every URL a page names: src and href attributes, and the quoted URLs its start-up script passes on."""
    return URL_ATTRIBUTE.findall(html) + re.findall(r"""(?:url|spec-url)\s*[:=]\s*['"]([^'"]+)['"]""", html)


@pytest.mark.sqlite_only  # no database in it
def test_docs_pages_load_everything_from_this_server(api: Api) -> None:
    client = api.client
    for page, script in (("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")):
        response = client.get(page)  # no key
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
        html = response.text
        assert not re.search(r"https?:|//cdn|jsdelivr|unpkg|googleapis", html, re.I), page
        urls = referenced(html)
        assert f"{ASSET_PATH}{script}" in urls and "/openapi.json" in urls, urls
        for url in urls:
            assert url.startswith("/"), (page, url)
            if url.startswith(ASSET_PATH):
                asset = client.get(url)  # no key either
                assert asset.status_code == 200, url
                name = url.removeprefix(ASSET_PATH)
                assert asset.content == rewritten(name)
                if name not in REWRITES:
                    assert asset.content == (asset_folder() / name).read_bytes()
                assert asset.headers["content-type"].split(";")[0] == {
                    "js": "text/javascript", "css": "text/css", "png": "image/png"}[name.rsplit(".", 1)[1]]
                assert asset.headers["x-content-type-options"] == "nosniff"
    swagger = client.get("/docs").text
    assert '"validatorUrl": null' in swagger  # Swagger UI would ask validator.swagger.io about the document
    assert f'href="{ASSET_PATH}swagger-ui.css"' in swagger
    assert client.get("/docs/oauth2-redirect").status_code == 200
    # ReDoc's bundle would show Redocly's logo from its CDN: the copy served has no such address
    redoc = client.get(f"{ASSET_PATH}redoc.standalone.js").content
    original = (asset_folder() / "redoc.standalone.js").read_bytes()
    assert b"cdn.redoc.ly" in original and b"cdn.redoc.ly" not in redoc
    assert len(redoc) == len(original) - len(b"https://cdn.redoc.ly/redoc/logo-mini.svg")
    # only the files the pages use are public: the folder is not
    assert client.get(f"{ASSET_PATH}missing.js").status_code == 401
    assert client.get(f"{ASSET_PATH}missing.js", headers=api.new_key("rita", "read")).status_code == 404


@pytest.mark.sqlite_only
def test_docs_pages_behind_a_path_prefix(engine: Engine, empty_db_url: str) -> None:
    """Behind a proxy that serves the API under /rd (root_path), the pages name their files under /rd too."""
    app = create_app(ApiSettings(database_url=empty_db_url))
    with TestClient(app, root_path="/rd") as client:
        html = client.get("/docs").text
        assert f"/rd{ASSET_PATH}swagger-ui-bundle.js" in referenced(html) and "/rd/openapi.json" in html
        assert f"/rd{ASSET_PATH}redoc.standalone.js" in referenced(client.get("/redoc").text)
