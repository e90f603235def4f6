"""What a real server (``reviewdepth serve``) believes of a client, and what it writes down (issue 26):

* ``X-Forwarded-Proto`` and ``X-Forwarded-For`` are honoured only from the proxies named in
  ``REVIEWDEPTH_FORWARDED_ALLOW_IPS`` (none by default), so a client cannot make the dashboard's key cookie
  ``Secure`` nor put another address in the access log;
* the access log (on by default) never holds a key: the dashboard's ``?key=`` is written ``[redacted]``, however
  the parameter's name is encoded."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine

from reviewdepth.services.admin.keys import create_key

from .server import Server, started_server

FORGED = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}


def sign_in(server: Server, secret: str, query_name: str = "key") -> httpx.Response:
    """``GET /?<query_name>=<secret>`` (the dashboard's sign-in) through a would-be proxy's headers."""
    return httpx.get(f"{server.base}/?{query_name}={secret}", headers=FORGED, follow_redirects=False)


def access_lines(server: Server) -> list[str]:
    return [line for line in server.log_text().splitlines() if '"GET /' in line]


@pytest.mark.sqlite_only
def test_forwarded_headers_are_ignored_unless_the_proxy_is_configured(
        engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    secret = create_key(engine, "ana", "read")[1]
    with started_server(empty_db_url, tmp_path, access_log=True) as server:
        answer = sign_in(server, secret)
        assert answer.status_code == 303
        assert "Secure" not in answer.headers["set-cookie"], answer.headers["set-cookie"]
        assert not any("203.0.113.9" in line for line in access_lines(server)), access_lines(server)
    with started_server(empty_db_url, tmp_path, access_log=True,
                        env={"REVIEWDEPTH_FORWARDED_ALLOW_IPS": "127.0.0.1"}) as proxied:
        answer = sign_in(proxied, secret)
        assert answer.status_code == 303 and "Secure" in answer.headers["set-cookie"]
        assert any(line.lstrip("INFO: ").startswith("203.0.113.9") for line in access_lines(proxied)), \
            access_lines(proxied)


@pytest.mark.sqlite_only
def test_the_access_log_never_holds_a_key(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    secret = create_key(engine, "ana", "read")[1]
    with started_server(empty_db_url, tmp_path, access_log=True) as server:
        for name in ("key", "k%65y"):  # the gate decodes the name, so the log must too
            assert sign_in(server, secret, name).status_code == 303
        assert sign_in(server, "rd_not-a-key-but-secret-looking").status_code == 401
        with_other = httpx.get(f"{server.base}/?target=0.9&key={secret}&confidence=0.95", follow_redirects=False)
        assert with_other.status_code == 303
        assert httpx.get(f"{server.base}/topics", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
        lines = access_lines(server)
        text = server.log_text()
    assert len(lines) >= 5, text
    assert secret not in text and "rd_not-a-key" not in text, text
    assert sum("key=[redacted]" in line for line in lines) == 3, lines
    assert any(re.search(r"k%65y=\[redacted\]", line) for line in lines), lines
    assert any("/?target=0.9&key=[redacted]&confidence=0.95" in line for line in lines), lines


@pytest.mark.parametrize(("logged", "written"), [
    ("/?key=rd_abc", "/?key=[redacted]"),
    ("/?logout&key=rd_abc&key=rd_def", "/?logout&key=[redacted]&key=[redacted]"),
    ("/?k%65y=rd_abc&keys=1&monkey=2", "/?k%65y=[redacted]&keys=1&monkey=2"),
    ("/topics/key=x?target=0.9", "/topics/key=x?target=0.9"),
    ("Authorization: Bearer rd_abc", "Authorization: Bearer [redacted]"),
    ("Cookie: reviewdepth_key=rd_abc; other=1", "Cookie: reviewdepth_key=[redacted]; other=1"),
])
def test_what_the_redaction_writes(logged: str, written: str) -> None:
    from reviewdepth.api.access_log import redacted

    assert redacted(logged) == written
