"""Finding duplicate records (issue 28, item 5): identifiers normalised as reference managers compare them, titles of
one year matched by similarity, and the rules that keep distinct works apart (different DOIs or PMIDs, disagreeing
first authors, short titles), also across a chain of title matches."""

from __future__ import annotations

import pytest

from reviewdepth.formats.duplicates import (
    BibRecord,
    author_key,
    find_duplicates,
    normalise_doi,
    normalise_pmid,
    normalise_title,
)

LONG = "Methylphenidate for attention deficit hyperactivity disorder in adults: a randomised trial"


def pairs(records: list[BibRecord], **kw: float) -> set[tuple[str, str]]:
    """(duplicate, kept) of every group."""
    return {(d.doc_id, g.kept) for g in find_duplicates(records, **kw) for d in g.duplicates}


@pytest.mark.parametrize(("given", "expected"), [
    ("10.1000/ABC.1", "10.1000/abc.1"), ("https://doi.org/10.1000/abc.1", "10.1000/abc.1"),
    ("http://dx.doi.org/10.1000/abc.1", "10.1000/abc.1"), ("doi:10.1000/abc.1", "10.1000/abc.1"),
    ("DOI: 10.1000/abc.1 ", "10.1000/abc.1"), ("not a doi", None), ("", None), (None, None)])
def test_doi_normalised(given: str | None, expected: str | None) -> None:
    assert normalise_doi(given) == expected


@pytest.mark.parametrize(("given", "expected"), [
    ("123", "123"), ("PMID: 00123", "123"), ("https://pubmed.ncbi.nlm.nih.gov/10051933", "10051933"),
    ("https://pubmed.ncbi.nlm.nih.gov/10051933/", "10051933"), ("none", None), (None, None)])
def test_pmid_normalised(given: str | None, expected: str | None) -> None:
    assert normalise_pmid(given) == expected


def test_title_and_author_normalised() -> None:
    assert normalise_title("  Éffects of   X-ray: a TRIAL. ") == "effects of x ray a trial"
    assert author_key("Smith, John; Doe, A") == author_key("Smith J") == author_key("John Smith") == "smith"
    assert author_key("Smith JA") == "smith" and author_key(None) == ""


def test_doi_and_pmid_link_records_whatever_their_titles() -> None:
    records = [BibRecord("a", "One title", 2020, doi="10.1/X"), BibRecord("b", "Other words", 2021,
                                                                          doi="https://doi.org/10.1/x"),
               BibRecord("c", None, None, pmid="PMID: 77"), BibRecord("d", "zzz", 1999, pmid="77"),
               BibRecord("e", None, None, doi="10.1/y")]
    groups = find_duplicates(records)
    assert [(g.kept, [(d.doc_id, d.matched, d.basis, d.similarity) for d in g.duplicates]) for g in groups] == [
        ("a", [("b", "a", "doi", 100.0)]), ("c", [("d", "c", "pmid", 100.0)])]


def test_similar_titles_of_one_year_match_at_the_threshold_and_not_below() -> None:
    variant = LONG.replace("randomised", "randomized")
    records = [BibRecord("1", LONG, 2018, first_author="Jones, K"), BibRecord("2", variant, 2018,
                                                                               first_author="Jones K")]
    assert pairs(records) == {("2", "1")}
    assert pairs(records, title_threshold=100.0) == set()  # not the same text once normalised
    other_year = [records[0], BibRecord("2", variant, 2019, first_author="Jones K")]
    assert pairs(other_year) == set()
    other_author = [records[0], BibRecord("2", variant, 2018, first_author="Brown, K")]
    assert pairs(other_author) == set()
    a_typo_more = variant.replace("adults", "adolts").replace("trial", "trail").replace("attention", "atention")
    strict = [records[0], BibRecord("3", a_typo_more, 2018)]
    assert pairs(strict, title_threshold=99.0) == set() and pairs(strict, title_threshold=90.0) == {("3", "1")}


def test_different_identifiers_are_never_joined_by_title_even_through_a_chain() -> None:
    records = [BibRecord("a", LONG, 2020), BibRecord("b", LONG, 2020, doi="10.1/b"),
               BibRecord("c", LONG, 2020, doi="10.1/c"), BibRecord("d", LONG, 2020, pmid="5"),
               BibRecord("e", LONG, 2020, pmid="6")]
    groups = find_duplicates(records)
    for g in groups:
        members = {g.kept, *(d.doc_id for d in g.duplicates)}
        dois = {r.doi for r in records if r.doc_id in members and r.doi}
        pmids = {r.pmid for r in records if r.doc_id in members and r.pmid}
        assert len(dois) <= 1 and len(pmids) <= 1, members
    # a DOI-only and a PMID-only record do not contradict each other: two groups, every record in one of them
    assert len(groups) == 2 and sum(len(g.duplicates) for g in groups) == 3


def test_short_titles_need_the_same_first_author_and_missing_years_too() -> None:
    records = [BibRecord("1", "Editorial", 2018, first_author="Lee, A"),
               BibRecord("2", "Editorial", 2018, first_author="Kim, B"),
               BibRecord("3", "Editorial", 2018, first_author="Lee A"),
               BibRecord("4", LONG, None, first_author="Ng, T"), BibRecord("5", LONG, 2001, first_author="Ng T"),
               BibRecord("6", LONG, None)]
    assert pairs(records) == {("3", "1"), ("5", "4")}


def test_the_preferred_record_is_kept() -> None:
    records = [BibRecord("9", LONG, 2018), BibRecord("10", LONG, 2018), BibRecord("x", LONG, 2018)]
    assert pairs(records) == {("9", "10"), ("x", "10")}  # the default: document ids in text order
    ranks = {"x": 1, "9": 2}
    assert pairs(records, preference=lambda doc: (ranks.get(doc, 99), doc)) == {("9", "x"), ("10", "x")}


def test_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="not in"):
        find_duplicates([], title_threshold=0)
