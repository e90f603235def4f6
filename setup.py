"""Build configuration for the compiled column scanner, hash join and chain step; metadata lives in pyproject.toml.

The scanner is optional: without a working C compiler the build warns and installs the package without it, and
`reviewdepth.formats.scan` falls back to its pure-Python implementation (same results, slower)."""

from pathlib import Path

from setuptools import Extension, find_packages, setup

# the source folders and the names their packages install under (pyproject.toml's package-dir: the Typer app in cli/
# installs as reviewdepth.cli, the Alembic tree in migrations/ as reviewdepth.migrations)
SOURCE_FOLDERS = {"reviewdepth": "reviewdepth", "cli": "reviewdepth.cli", "migrations": "reviewdepth.migrations"}


def installed_packages() -> list[str]:
    """Every package (a folder with an ``__init__.py``) under the source folders, as it installs."""
    return sorted(name for folder, package in SOURCE_FOLDERS.items()
                  for name in (package, *(f"{package}.{sub}" for sub in find_packages(Path(__file__).parent / folder))))


if __name__ == "__main__":  # the build backend runs this file as __main__; tests/test_packaging.py imports it
    setup(
        packages=installed_packages(),
        ext_modules=[
            Extension(
                "reviewdepth.formats._textscan",
                sources=["reviewdepth/formats/_textscan.c"],
                extra_compile_args=["-O2", "-pthread"],
                extra_link_args=["-pthread"],
                optional=True,
            ),
            Extension(
                "reviewdepth.measures._hashjoin",
                sources=["reviewdepth/measures/_hashjoin.c"],
                extra_compile_args=["-O2"],
                optional=True,
            ),
            Extension(
                "reviewdepth.store._chainlink",
                sources=["reviewdepth/store/_chainlink.c"],
                extra_compile_args=["-O2"],
                libraries=["dl"],  # dlopen of the system's libcrypto (in libc itself from glibc 2.34)
                optional=True,
            ),
        ],
    )
