"""Counts a person reads, with the noun in the number the count takes: "1 record", "0 records", "1,234 records".

Every line that prints a count of things (imports, judge, sample draw, the report, prisma, topics) writes it
through `counted`, so no line says "1 judgments" or hedges with "judgment(s)". English only: one form for exactly
one, the other for every other count (zero included)."""

from __future__ import annotations


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """``singular`` when ``count`` is 1, else ``plural`` (default: ``singular`` + "s"; give it for "study",
    "studies" and the like)."""
    return singular if count == 1 else (plural if plural is not None else singular + "s")


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` with thousands separators, then its noun: ``counted(1, "judgment")`` → ``1 judgment``,
    ``counted(1500, "ranked document")`` → ``1,500 ranked documents``, ``counted(2, "study", "studies")``."""
    return f"{count:,} {noun(count, singular, plural)}"
