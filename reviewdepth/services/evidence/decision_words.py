"""Labels and screening decisions in words, as every door reads and names them: the one vocabulary of label
cells (grades, relevant and non-relevant words, maybe and skip), the screening stage a judgment is made at, and
the one-word name of what a judgment decided. Files, the API and the CLI all read labels through here, so a word
added to the vocabulary is accepted, listed in errors and published in the API's pattern at once."""

from __future__ import annotations

from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Invalid
from reviewdepth.store import validation
from reviewdepth.store.models import DEFAULT_STAGE, STAGES

RELEVANT_WORDS = frozenset({"1", "yes", "y", "true", "relevant", "include", "included", "responsive"})
# the words the tool prints ("not relevant", an overlay's "Not Responsive") read back as labels too
NONRELEVANT_WORDS = frozenset({"0", "no", "n", "false", "nonrelevant", "non-relevant", "irrelevant", "exclude",
                               "excluded", "not responsive", "non-responsive", "not relevant", "not-relevant",
                               "not_relevant", "not included"})
# screening decisions that are not relevance labels (`read_decision`): a maybe is recorded with relevant NULL and
# decides no label; a skip is logged and leaves the document unscreened
MAYBE_WORDS = frozenset({"maybe", "uncertain", "unsure", "undecided"})
SKIP_WORDS = frozenset({"skip", "skipped"})


def read_label(value: str, path: str, line: int, column: str, level: int) -> tuple[bool | None, int | None]:
    """(relevant, grade) from a label cell; empty = not screened (None)."""
    text = value.strip()
    if text == "":
        return None, None
    lowered = text.lower()
    try:
        grade = int(text)
    except ValueError:
        grade = None
    if grade is not None:
        if not validation.INT32_MIN <= grade <= validation.INT32_MAX:
            raise InputError(path, line, column, f"grade {text!r} is outside {validation.INT32_MIN} to "
                             f"{validation.INT32_MAX}")
        return (None if grade < 0 else grade >= level), grade
    if lowered in RELEVANT_WORDS:
        return True, None
    if lowered in NONRELEVANT_WORDS:
        return False, None
    raise InputError(path, line, column, f"label {text!r} is {label_vocabulary(level)}")


def read_decision(value: str, path: str, line: int, column: str,
                  level: int) -> tuple[str | None, bool | None, int | None]:
    """(decision kind, relevant, grade) from a label cell of a door that records screening decisions: ``maybe``
    (`MAYBE_WORDS`) or ``skip`` (`SKIP_WORDS`) with relevant and grade None, else (None, *`read_label`)."""
    lowered = value.strip().lower()
    if lowered in MAYBE_WORDS:
        return "maybe", None, None
    if lowered in SKIP_WORDS:
        return "skip", None, None
    try:
        return (None, *read_label(value, path, line, column, level))
    except InputError as exc:
        raise InputError(path, line, column, f"label {value.strip()!r} is {label_vocabulary(level, decisions=True)}"
                         ) from exc


def label_pattern() -> str:
    """The regular expression of the labels `read_decision` accepts (for documents that state them): a whole
    number within int32 in ASCII digits, or a word of the vocabulary (maybe and skip included) in any case."""
    def any_case(word: str) -> str:
        return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)  # letters, "-", " "

    words = sorted(w for w in RELEVANT_WORDS | NONRELEVANT_WORDS | MAYBE_WORDS | SKIP_WORDS if not w.isdigit())
    return (f"^(?:{validation.integer_pattern(validation.INT32_MIN, validation.INT32_MAX)}|"
            f"{'|'.join(any_case(w) for w in words)})$")


def label_vocabulary(level: int, *, decisions: bool = False) -> str:
    """Every label ``read_label`` accepts (with ``decisions``, `read_decision`), in words, generated from the one
    vocabulary so a word added there is listed too."""
    def words(vocabulary: frozenset[str]) -> str:
        return ", ".join(sorted(w for w in vocabulary if not w.lstrip("-").isdigit()))

    more = (f", nor a maybe ({words(MAYBE_WORDS)}), nor a skip ({words(SKIP_WORDS)})" if decisions else "")
    return (f"neither a whole number (>= {level} relevant, below it not, negative undecided), nor a relevant word "
            f"({words(RELEVANT_WORDS)}), nor a non-relevant word ({words(NONRELEVANT_WORDS)}){more}, nor empty; "
            "case is ignored")


def decision_name(kind: str | None, relevant: bool | None, grade: int | None) -> str:
    """What a judgment decided, in one word: ``maybe`` / ``skip`` (its kind), ``include`` / ``exclude``
    (relevant or not), ``undecided`` (neither: a negative grade, a qrels entry in the pool but not judged)."""
    if kind is not None:
        return kind
    return "undecided" if relevant is None else "include" if relevant else "exclude"


def checked_stage(stage: str | None, field: str) -> str | None:
    """A screening stage as stored: None for the default (``title-abstract``, or no stage given)."""
    if stage is None or not stage.strip():
        return None
    stage = stage.strip().lower()
    if stage not in STAGES:
        raise Invalid(f"{field}: must be one of {', '.join(STAGES)}, not {stage!r}")
    return None if stage == DEFAULT_STAGE else stage
