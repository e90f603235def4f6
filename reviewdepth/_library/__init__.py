"""The Python library's implementation (``import reviewdepth as rd``). Private: the names users call are those
`reviewdepth.__all__` lists, which load these modules on first use."""
