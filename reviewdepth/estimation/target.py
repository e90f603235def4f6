"""The target recall: one value type, parsed once where a person or a program gives it (the CLI's ``--target``,
the API's ``target`` parameter, the Python library) and passed down as a `Target`.

A target is an exact fraction τ with 0 < τ ≤ 1 and the text it was given as (``0.95``, ``.90``, ``19/20``), which
every output prints as given. Recall 1 is a target: the depth report's row for it is the rank of the last relevant
document found, and a fully judged queue knows its recall exactly. No random sample can certify recall 1 (only
judging every document can), so the use cases that certify with a sample (the stop plan, the sample plan,
simulations, the validation document, the methods text) refuse it with `Target.require_certifiable`: one range,
one message for a bad target, one message for a target no sample can certify.

Two targets are equal when their fractions are (``0.95`` == ``0.950`` == ``19/20``); the text is how it is shown.
"""

from __future__ import annotations

from fractions import Fraction

TARGET_RANGE = "(0, 1]"
# the spellings of a target anywhere a person reads what to give
TARGET_RULE = f"a recall in {TARGET_RANGE}, e.g. 0.95"


class TargetError(ValueError):
    """A target recall that is not a number in (0, 1], or one no sample can certify; the message names neither
    the option nor the parameter (each door says which it was)."""


class Target:
    """A target recall: its exact ``value`` and the ``text`` it was given as (module docstring)."""

    __slots__ = ("text", "value")
    text: str
    value: Fraction

    def __init__(self, value: Fraction, text: str) -> None:
        # through `Target.parse` (the one range check); the constructor trusts its caller
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "text", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Target is immutable: cannot set {name}")

    @classmethod
    def parse(cls, given: object) -> Target:
        """``given`` (a Target, a text such as ``"0.95"`` or ``"19/20"``, or a number) as a target recall;
        `TargetError` when it is not a number in (0, 1]. A number is read as its shortest decimal (0.95 → "0.95")."""
        if isinstance(given, Target):
            return given
        if isinstance(given, bool):
            raise TargetError(f"{given!r} is not a number ({TARGET_RULE})")
        text = (repr(given) if isinstance(given, float) else str(given)).strip()
        try:
            value = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise TargetError(f"{text!r} is not a number ({TARGET_RULE})") from None
        if not 0 < value <= 1:
            raise TargetError(f"the target recall must be in {TARGET_RANGE}, not {text}")
        return cls(value, text)

    @property
    def written_as_fraction(self) -> bool:
        """Whether it was given as a fraction (``19/20``): shown as given, not as a percentage."""
        return "/" in self.text

    @property
    def certifiable(self) -> bool:
        """Whether a random sample can certify this target (every target below 1)."""
        return self.value < 1

    def require_certifiable(self) -> Target:
        """This target when a sample can certify it; `TargetError` for recall 1."""
        if not self.certifiable:
            raise TargetError(f"no random sample can certify recall {self.text} (only judging every document "
                              "knows it): give a target below 1")
        return self

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Target({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __reduce__(self) -> tuple[type[Target], tuple[Fraction, str]]:
        # a simulation's plan crosses to worker processes (and Dask) by pickle; __slots__ and the blocked setattr
        # need the constructor
        return (Target, (self.value, self.text))


DEFAULT_TARGET = Target.parse("0.95")
