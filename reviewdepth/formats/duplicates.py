"""Duplicate records of a screening set: the same work imported twice (from two databases, or twice from one).

Records are matched as reference managers match them, strongest evidence first:

1. **DOI**: the same DOI once normalised (case-folded; ``https://doi.org/``, ``doi:`` and the like removed);
2. **PMID**: the same PubMed id (the digits of ``PMID: 123`` or ``https://pubmed.ncbi.nlm.nih.gov/123``);
3. **title**: the same publication year and normalised titles (accents, case, punctuation and spacing removed)
   at least ``title_threshold`` similar (RapidFuzz's normalised Indel similarity, 0–100, on the normalised
   titles), where neither record's first author contradicts the other's. A title shorter than
   `SHORT_TITLE` characters must match exactly and so must the first authors: "Editorial" or "Reply" is not
   evidence. A record without a year is matched by title only when its first author agrees.

Two records whose DOIs differ, or whose PMIDs differ, are never put together by title: distinct identifiers mean
distinct works (a correction and the article it corrects, a protocol and its review). Matches are transitive: a
group is every record linked to another by one of the rules above, and a title match that would bring two
different DOIs, PMIDs or first authors into one group is not made.

Pure: no I/O; RapidFuzz (MIT, C++) does the title comparisons, block by block (one publication year at a time).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

DuplicateBasis = Literal["doi", "pmid", "title"]
BASES: tuple[DuplicateBasis, ...] = ("doi", "pmid", "title")
DEFAULT_TITLE_THRESHOLD = 95.0
# a normalised title this short carries too little to match on by similarity ("editorial", "reply to smith")
SHORT_TITLE = 30
# rows compared at once in a year block: bounds the similarity matrix (rows × block) that RapidFuzz fills
_CHUNK = 512

_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.IGNORECASE)
_PMID_DIGITS = re.compile(r"(\d{1,12})/?$")
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


class MissingMatcher(RuntimeError):
    """The optional title matcher (RapidFuzz) is not installed."""


@dataclass(frozen=True)
class BibRecord:
    """One record's fields as imported (any may be missing)."""

    doc_id: str
    title: str | None = None
    year: int | None = None
    doi: str | None = None
    pmid: str | None = None
    first_author: str | None = None


@dataclass(frozen=True)
class DuplicateLink:
    """Why ``doc_id`` belongs to its group: it matched ``matched`` on ``basis`` (``similarity`` 100 = exact)."""

    doc_id: str
    matched: str
    basis: DuplicateBasis
    similarity: float


@dataclass(frozen=True)
class DuplicateGroup:
    """Records that are one work: ``kept`` stays in the screening set, ``duplicates`` leave it (each with the
    link that put it in the group)."""

    kept: str
    duplicates: tuple[DuplicateLink, ...]


def normalise_doi(value: str | None) -> str | None:
    """A DOI as compared: case-folded, without a resolver prefix or spaces; None when it is not a DOI."""
    if value is None:
        return None
    text = _DOI_PREFIX.sub("", value.strip()).strip().casefold()
    text = re.sub(r"\s+", "", text)
    return text if text.startswith("10.") and "/" in text else None


def normalise_pmid(value: str | None) -> str | None:
    """A PubMed id's digits (from ``123``, ``PMID: 123`` or a PubMed address); None when there are none."""
    if value is None:
        return None
    found = _PMID_DIGITS.search(value.strip())
    if found is None:
        return None
    digits = found.group(1).lstrip("0")
    return digits or None


def normalise_title(value: str | None) -> str:
    """A title as compared: accents removed, case-folded, every run of non-letters and non-digits one space."""
    if not value:
        return ""
    decomposed = unicodedata.normalize("NFKD", value)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NOT_WORD.sub(" ", plain.casefold()).strip()


def author_key(value: str | None) -> str:
    """A first author as compared: the family name (before a comma; the first word before initials, as PubMed
    writes "Smith JA"; else the last word), normalised."""
    if not value:
        return ""
    text = value.split(";")[0].strip()
    if "," in text:  # "Smith, John"
        return normalise_title(text.split(",")[0])
    words = text.split()
    if len(words) > 1 and len(words[-1].strip(".")) <= 2:  # "Smith J", "Smith JA" (PubMed's order)
        return normalise_title(words[0])
    return normalise_title(words[-1] if words else "")  # "John Smith"


class _Groups:
    """Union-find over record positions; each group keeps the identifiers and first authors of its members, so that
    no chain of title matches puts two records of different DOIs (or PMIDs, or first authors) in one group."""

    def __init__(self, size: int, dois: list[str | None], pmids: list[str | None], authors: list[str]) -> None:
        self.parent = list(range(size))
        self.keys: list[tuple[set[str], set[str], set[str]]] = [
            ({d} if d else set(), {p} if p else set(), {a} if a else set())
            for d, p, a in zip(dois, pmids, authors, strict=True)]

    def compatible(self, a: int, b: int) -> bool:
        ka, kb = self.keys[self.find(a)], self.keys[self.find(b)]
        return all(not x or not y or x == y for x, y in zip(ka, kb, strict=True))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        root, other = min(ra, rb), max(ra, rb)
        self.parent[other] = root
        for mine, theirs in zip(self.keys[root], self.keys[other], strict=True):
            mine |= theirs
        return True


def find_duplicates(records: Sequence[BibRecord], *, title_threshold: float = DEFAULT_TITLE_THRESHOLD,
                    preference: Callable[[str], tuple[object, ...]] | None = None) -> list[DuplicateGroup]:
    """The groups of two or more records that are one work (module docstring). ``preference`` orders a group's
    records, the first is kept (default: the document id); groups come in the order of their kept record."""
    if not 0 < title_threshold <= 100:
        raise ValueError(f"title threshold {title_threshold!r} is not in (0, 100]")
    n = len(records)
    dois = [normalise_doi(r.doi) for r in records]
    pmids = [normalise_pmid(r.pmid) for r in records]
    titles = [normalise_title(r.title) for r in records]
    authors = [author_key(r.first_author) for r in records]
    groups = _Groups(n, dois, pmids, authors)
    links: dict[int, tuple[int, DuplicateBasis, float]] = {}

    def link(a: int, b: int, basis: DuplicateBasis, similarity: float) -> None:
        if groups.join(a, b):
            links.setdefault(b, (a, basis, similarity))
            links.setdefault(a, (b, basis, similarity))

    for basis, keys in (("doi", dois), ("pmid", pmids)):
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key is None:
                continue
            if key in first:
                link(first[key], i, basis, 100.0)  # type: ignore[arg-type]
            else:
                first[key] = i

    compatible = groups.compatible

    # exact titles first (any length; a short one or one without a year needs its first author to agree)
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, title in enumerate(titles):
        if title:
            by_title[title].append(i)
    for members in by_title.values():
        for pos, a in enumerate(members):
            for b in members[pos + 1:]:
                weak = len(titles[a]) < SHORT_TITLE or records[a].year is None or records[b].year is None
                same_year = records[a].year == records[b].year or records[a].year is None or records[b].year is None
                if same_year and compatible(a, b) and (not weak or (authors[a] and authors[a] == authors[b])):
                    link(a, b, "title", 100.0)
    if title_threshold < 100:
        _similar_titles(records, titles, title_threshold, compatible, link)

    members_of: dict[int, list[int]] = defaultdict(list)
    for i in range(n):
        members_of[groups.find(i)].append(i)
    order = preference or (lambda doc: (doc,))
    out: list[DuplicateGroup] = []
    for members in members_of.values():
        if len(members) < 2:
            continue
        kept = min(members, key=lambda i: order(records[i].doc_id))
        dups = []
        for i in sorted(members, key=lambda i: order(records[i].doc_id)):
            if i == kept:
                continue
            other, basis, similarity = links[i]
            dups.append(DuplicateLink(records[i].doc_id, records[other].doc_id, basis, round(similarity, 1)))
        out.append(DuplicateGroup(records[kept].doc_id, tuple(dups)))
    out.sort(key=lambda g: order(g.kept))
    return out


def _similar_titles(records: Sequence[BibRecord], titles: list[str], threshold: float,
                    compatible: Callable[[int, int], bool],
                    link: Callable[[int, int, DuplicateBasis, float], None]) -> None:
    """Link records of one publication year whose long titles are at least ``threshold`` similar."""
    try:
        from rapidfuzz import fuzz, process
    except ImportError:
        raise MissingMatcher("comparing titles needs RapidFuzz: pip install 'reviewdepth[dedupe]'") from None

    by_year: dict[int, list[int]] = defaultdict(list)
    for i, record in enumerate(records):
        if record.year is not None and len(titles[i]) >= SHORT_TITLE:
            by_year[record.year].append(i)
    for members in by_year.values():
        if len(members) < 2:
            continue
        texts = [titles[i] for i in members]
        for start in range(0, len(members), _CHUNK):
            scores = process.cdist(texts[start:start + _CHUNK], texts, scorer=fuzz.ratio, score_cutoff=threshold,
                                   dtype="float32")
            rows, cols = scores.nonzero()
            for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
                a, b = members[start + row], members[col]
                if a < b and titles[a] != titles[b] and compatible(a, b):
                    link(a, b, "title", float(scores[row, col]))
