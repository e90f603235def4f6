"""Build configuration for the compiled column scanner, hash join and chain step; metadata lives in pyproject.toml.

The scanner is optional: without a working C compiler the build warns and installs the package without it, and
`reviewdepth.formats.scan` falls back to its pure-Python implementation (same results, slower)."""

from setuptools import Extension, setup

setup(
    packages=[
        "reviewdepth",
        "reviewdepth.api",
        "reviewdepth.api.routers",
        "reviewdepth.cli",
        "reviewdepth.estimation",
        "reviewdepth.formats",
        "reviewdepth.measures",
        "reviewdepth.migrations",
        "reviewdepth.migrations.versions",
        "reviewdepth.report",
        "reviewdepth.services",
        "reviewdepth.store",
    ],
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
