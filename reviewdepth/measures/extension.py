"""Loading an optional compiled module: built when the installing machine had a C compiler (setup.py marks both
extensions optional), with an environment variable that forces the pure-Python code it stands in for."""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def optional_extension(module: str, switch: str) -> ModuleType | None:
    """The compiled ``module``, or None when it was not built or when the environment variable ``switch`` is set
    to anything but empty or ``0``."""
    if os.environ.get(switch, "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
