"""Covidence's reference exports (CSV): one file per list of the review, one row per study.

Covidence keeps each study in one list: ``screen`` (title and abstract screening not finished), ``irrelevant``
(excluded at title and abstract), ``fulltext`` (passed title and abstract, full text not decided), ``excluded``
(excluded at full text) and ``included`` (included at full text). Its CSV export of a list has the columns
``Title, Authors, Abstract, Published Year, Published Month, Journal, Volume, Issue, Pages, Accession Number, DOI,
Ref, Covidence #, Study, Notes, Tags``, and no decision column: the list is the decision. A file's list is named
by the caller (``LIST=FILE``) or read from the name Covidence gives the file
(``review_<id>_<list>_csv_<timestamp>.csv``). A study's id is its ``Covidence #``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reviewdepth.formats.csv_judgments import header_key, read_table
from reviewdepth.formats.errors import InputError

LISTS = ("screen", "irrelevant", "fulltext", "excluded", "included")
ID_COLUMN = "Covidence #"
# Covidence's own file names: review_283729_included_csv_20240320131744.csv (the list may be spelled with a
# space, hyphen or underscore: "full text", "full_text_review", …)
FILE_NAME = re.compile(r"review_\d+_(?P<list>[a-z_ -]+?)_csv_\d+", re.I)
LIST_SPELLINGS = {"screen": "screen", "screening": "screen", "title_and_abstract_screening": "screen",
                  "irrelevant": "irrelevant", "fulltext": "fulltext", "full_text": "fulltext",
                  "full_text_review": "fulltext", "excluded": "excluded", "included": "included"}


@dataclass(frozen=True)
class CovidenceFile:
    path: str
    list_name: str
    studies: list[tuple[str, int]]  # (Covidence #, line)


def file_list(spec: str) -> tuple[str, str]:
    """``LIST=FILE`` or ``FILE`` named as Covidence names its exports: (list, path)."""
    name, sep, path = spec.partition("=")
    if sep and header_key(name) in LIST_SPELLINGS and not Path(spec).exists():
        return LIST_SPELLINGS[header_key(name)], path
    found = FILE_NAME.search(Path(spec).name)
    if found is not None and header_key(found["list"]) in LIST_SPELLINGS:
        return LIST_SPELLINGS[header_key(found["list"])], spec
    raise InputError(spec, None, "list", f"cannot tell which Covidence list the file is: name it as LIST=FILE "
                     f"with LIST one of {', '.join(LISTS)} (Covidence's own file names, "
                     "review_<id>_<list>_csv_<time>.csv, name it)")


def read_covidence(data: bytes, path: str, list_name: str) -> CovidenceFile:
    """The studies of one list's export, in file order; their ids must be present and distinct."""
    if list_name not in LISTS:
        raise InputError(path, None, "list", f"unknown Covidence list {list_name!r}; one of {', '.join(LISTS)}")
    header, rows = read_table(data, path)
    keys = [header_key(h) for h in header]
    if header_key(ID_COLUMN) not in keys:
        raise InputError(path, 1, ID_COLUMN, f"no {ID_COLUMN!r} column: a Covidence reference export has one; "
                         f"the header is {header}")
    at = keys.index(header_key(ID_COLUMN))
    studies: list[tuple[str, int]] = []
    first: dict[str, int] = {}
    for line, cells in rows:
        doc = cells[at].strip() if at < len(cells) else ""
        if not doc:
            raise InputError(path, line, header[at], "empty Covidence #")
        if doc in first:
            raise InputError(path, line, header[at], f"duplicate study {doc!r} (first on line {first[doc]})")
        first[doc] = line
        studies.append((doc, line))
    return CovidenceFile(path, list_name, studies)
