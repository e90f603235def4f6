"""``GET /topics/{topic}/monitor`` and the dashboard ``GET /`` on SQLite and PostgreSQL: the monitor's JSON is the
service's object; the dashboard, parsed with the standard library's HTML parser, has one row per topic with its
status and links, no script, a viewport for phones and the restrictive CSP; a key is required (header, or the
cookie that ``/?key=`` sets and that only safe methods accept)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch

from .conftest import Api
from .test_auth_and_errors import problem
from .test_security_headers import policy_of

DOCS = [f"d{i:02d}" for i in range(40)]
RELEVANT = {"d00", "d01", "d02", "d04", "d07", "d24"}


def judge(api: Api, topic: str, docs: list[str], role: str = "review") -> None:
    record_batch(api.engine, topic, [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs],
                 reviewer="ana", source="test")


def topics(api: Api) -> None:
    """T: 40 documents, top 20 reviewed, an audit stream with 12 documents judged (certified at 0.6, not at
    0.95); U: reviewed 5, no stream; 'a <b>&' (a name that needs escaping): no queue."""
    for name, reviewed in (("T", 20), ("U", 5)):
        create_topic(api.engine, name)
        store_ranking(api.engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
        judge(api, name, DOCS[:reviewed])
    create_stream(api.engine, "T", every=1, seed=0, reviewer="ana")
    judge(api, "T", [d.doc_id for d in next_documents(api.engine, "T", count=12).documents], "audit")
    create_topic(api.engine, "a <b>&")


class Page(HTMLParser):
    """The dashboard's rows (class, cell texts, links), every tag name and the meta tags."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, object]] = []
        self.tags: list[str] = []
        self.meta: list[dict[str, str | None]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if self._cell is not None:
            self._cell.append(" ")  # a tag inside a cell separates words
        if tag == "tr" and "topic" in (found.get("class") or "").split():
            self.rows.append({"class": found["class"], "cells": [], "links": []})
        elif tag == "td" and self.rows:
            self._cell = []
        elif tag == "a" and self.rows:
            self.rows[-1]["links"].append(found["href"])  # type: ignore[attr-defined]
        elif tag == "meta":
            self.meta.append(found)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self.rows:
            self.rows[-1]["cells"].append(" ".join("".join(self._cell).split()))  # type: ignore[attr-defined]
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parsed(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_monitor_json_is_the_service_object(api: Api) -> None:
    topics(api)
    reader = api.new_key("rita", "read")
    for query, target in (("", "0.95"), ("?target=0.6&confidence=0.95&queue=q", "0.6")):
        response = api.client.get(f"/topics/T/monitor{query}", headers=reader)
        assert response.status_code == 200, response.text
        assert response.json() == build_monitor(api.engine, "T", target=target).to_dict()
    assert api.client.get("/topics/T/monitor?target=0.6", headers=reader).json()["status"] == "stop certified"
    problem(api.client.get("/topics/T/monitor"), 401, "missing API key")
    problem(api.client.get("/topics/nope/monitor", headers=reader), 404, "unknown topic")
    problem(api.client.get("/topics/T/monitor?queue=q9", headers=reader), 404, "no queue 'q9'")
    problem(api.client.get("/topics/T/monitor?target=2", headers=reader), 422, "target")
    problem(api.client.get("/topics/T/monitor?confidence=1", headers=reader), 422)
    problem(api.client.get("/topics/T/monitor?as_of=-3", headers=reader), 422)


def test_dashboard_lists_every_topic(api: Api) -> None:
    topics(api)
    reader = api.new_key("rita", "read")
    response = api.client.get("/?target=0.6", headers=reader)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert policy_of(response)["default-src"] == "'none'" and "script-src" not in policy_of(response)
    assert policy_of(response)["form-action"] == "'self'"  # the filter form, sent to this server only
    assert not re.search(r"<script|javascript:|\son\w+\s*=", response.text, re.I)
    assert re.findall(r"<form[^>]*>", response.text) == ['<form class="filter" method="get" action="/" role="search">']
    page = parsed(response.text)
    assert "script" not in page.tags and "progress" in page.tags and "meter" in page.tags
    assert {"name": "viewport", "content": "width=device-width, initial-scale=1"} in page.meta
    assert [(r["cells"][0].split()[0], r["cells"][1]) for r in page.rows] == [  # type: ignore[index]
        ("T", "reached"), ("U", "unknown"), ("a", "no queue")]  # the topic status words (issue 25)
    t, u, empty = page.rows
    assert t["links"] == ["/topics/T/report?format=html", "/topics/T/monitor?target=0.6&confidence=0.95"]
    assert "60% recall: reached — recall ≥ 0.600 (audit stream" in t["cells"][2]  # type: ignore[index]
    assert "reviewed 5 of 40" in u["cells"][2] and "sample stream start U" in u["cells"][2]  # type: ignore[index]
    assert empty["cells"][0].startswith("a <b>&") and "no queue yet" in empty["cells"][2]  # type: ignore[index]
    assert "a <b>&" not in response.text  # escaped
    followed = api.client.get(t["links"][0], headers=reader)  # type: ignore[index]
    assert followed.status_code == 200 and followed.headers["content-type"].startswith("text/html")


def test_dashboard_needs_a_key_header_or_cookie(api: Api) -> None:
    topics(api)
    client = api.client
    problem(client.get("/"), 401, "missing API key")
    page = client.get("/", headers={"Accept": "text/html"})
    assert page.status_code == 401 and "/?key=YOUR_KEY" in page.text and "www-authenticate" in page.headers
    problem(client.get("/?key=rd_wrong"), 401, "unknown API key")
    secret = api.new_key("rita", "read")["Authorization"].split()[1]
    sign_in = client.get(f"/?key={secret}&target=0.6", follow_redirects=False)
    assert sign_in.status_code == 303 and sign_in.headers["location"] == "/?target=0.6"
    cookie = sign_in.headers["set-cookie"]
    assert cookie.startswith(f"reviewdepth_key={secret};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert sign_in.headers["referrer-policy"] == "no-referrer"
    dashboard = client.get("/?target=0.6")  # the client keeps the cookie
    assert dashboard.status_code == 200 and secret not in dashboard.text
    assert client.get("/topics/T/monitor").status_code == 200  # a dashboard link, by cookie
    # a write never takes the cookie
    problem(client.post("/topics/T/next", json={"count": 1}), 401, "missing API key")
    signed_out = client.get("/?logout", follow_redirects=False)
    assert signed_out.status_code == 303 and "Max-Age=0" in signed_out.headers["set-cookie"]
    client.cookies.clear()
    client.cookies.set("reviewdepth_key", "rd_revoked-or-unknown")
    refused = client.get("/")
    assert refused.status_code == 401 and "Max-Age=0" in refused.headers["set-cookie"]


class Form(HTMLParser):
    """The forms of a page: (attributes, [(input attributes), ...])."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[dict[str, str | None], list[dict[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "form":
            self.forms.append((dict(attrs), []))
        elif tag == "input" and self.forms:
            self.forms[-1][1].append(dict(attrs))


def forms(html: str) -> list[tuple[dict[str, str | None], list[dict[str, str | None]]]]:
    found = Form()
    found.feed(html)
    return found.forms


def test_sign_in_page_has_a_form_that_keeps_the_dashboards_query(api: Api) -> None:
    """Without a key a browser gets a page (401, with the challenge) that says why, how keys are made and passed,
    and a GET form to /?key=… that keeps the rest of the query; the policy lets the form go to this server."""
    topics(api)
    client = api.client
    page = client.get("/?target=0.6&q=T&key", headers={"Accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 401 and page.headers["www-authenticate"].startswith("Bearer")
    assert page.headers["content-type"].startswith("text/html") and policy_of(page)["form-action"] == "'self'"
    assert "<title>reviewdepth: sign in</title>" in page.text and "missing API key" in page.text
    assert "reviewdepth keys create" in page.text and "Authorization: Bearer" in page.text
    assert not re.search(r"<script|javascript:|\son\w+\s*=", page.text, re.I)
    (form, inputs), = forms(page.text)
    assert form["method"] == "get" and form["action"] == "/"
    assert [(i["type"], i["name"], i.get("value")) for i in inputs] == [
        ("hidden", "target", "0.6"), ("hidden", "q", "T"), ("password", "key", None)]
    # what the form sends is the sign-in: a cookie, and back to the dashboard with the same query
    secret = api.new_key("rita", "read")["Authorization"].split()[1]
    signed_in = client.get("/", params={"target": "0.6", "q": "T", "key": secret}, follow_redirects=False)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/?target=0.6&q=T"
    dashboard = client.get(signed_in.headers["location"])
    assert dashboard.status_code == 200 and [r["cells"][0].split()[0] for r in parsed(dashboard.text).rows] == ["T"]
    # a wrong key: the same page, saying so; an HTML-blind client still gets the problem JSON
    wrong = client.get("/?key=rd_wrong", headers={"Accept": "text/html"})
    assert wrong.status_code == 401 and "unknown API key" in wrong.text and forms(wrong.text)
    problem(client.get("/?key=rd_wrong", headers={"Accept": "application/json"}), 401, "unknown API key")


def test_dashboard_active_topics_first_with_a_filter(api: Api) -> None:
    """The most recently judged topics first, never-judged ones after them by name; ``q`` (a part of the name,
    any case) and ``judged`` filter, the form shows them, the pager keeps them; a bad filter is a 422."""
    topics(api)  # T (judged last), U (judged before), 'a <b>&' (never judged)
    for name in ("A-idle", "B-idle"):
        create_topic(api.engine, name)
        store_ranking(api.engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    reader = api.new_key("rita", "read")

    def shown(query: str) -> tuple[list[str], Page, str]:
        response = api.client.get(f"/{query}", headers=reader)
        assert response.status_code == 200, response.text
        page = parsed(response.text)
        return [str(r["cells"][0]).split(" report")[0] for r in page.rows], page, response.text  # type: ignore[index]

    assert shown("")[0] == ["T", "U", "A-idle", "B-idle", "a <b>&"]
    judge(api, "U", DOCS[5:6])
    assert shown("")[0] == ["U", "T", "A-idle", "B-idle", "a <b>&"]
    assert shown("?q=idle")[0] == ["A-idle", "B-idle"]
    assert shown("?q=B")[0] == ["B-idle", "a <b>&"]  # any case
    assert shown("?judged=true")[0] == ["U", "T"]
    names, _, html = shown("?q=%3Cb&judged=false")
    assert names == ["a <b>&"] and 'name="q" maxlength="200" value="&lt;b"' in html
    names, _, html = shown("?judged=true&limit=1")
    assert names == ["U"] and "topics 1–1 of 2 with a judgment" in html
    assert 'href="/?target=0.95&amp;confidence=0.95&amp;judged=true&amp;page=2&amp;limit=1" rel="next"' in html
    assert shown("?judged=true&limit=1&page=2")[0] == ["T"]
    names, _, html = shown("?q=IDLE&judged=false&limit=1")
    assert names == ["A-idle"] and "topics 1–1 of 2 whose name contains “IDLE”" in html
    assert 'href="/?target=0.95&amp;confidence=0.95&amp;q=IDLE&amp;page=2&amp;limit=1" rel="next"' in html
    assert shown("?q=IDLE&page=2&limit=1")[0] == ["B-idle"]
    (form, inputs), = forms(shown("?q=idle&judged=true&limit=7")[2])
    assert form["method"] == "get" and form["action"] == "/"
    fields = {i["name"]: i for i in inputs}
    assert fields["q"]["value"] == "idle" and "checked" in fields["judged"] and fields["limit"]["value"] == "7"
    assert "page" not in fields  # a new filter starts at page 1
    assert "checked" not in {i["name"]: i for i in forms(html)[0][1]}["judged"]
    assert shown("?q=nothing")[0] == []
    problem(api.client.get("/?q=" + "x" * 201, headers=reader), 422)
    problem(api.client.get("/?judged=maybe", headers=reader), 422)
