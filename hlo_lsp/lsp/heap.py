"""Few glibc malloc arenas for the server process.

The server reads large documents in worker threads; glibc gives each thread its own arena (up to 8 per core),
and the tens of MB of short-lived objects a read frees stay mapped there, fragmented between what later reads
keep (an earlier 2,000-edit soak ended at 1.75x the RSS after open with ``MALLOC_ARENA_MAX=2``, 2.81x
without). The cap is set here so that no one has to remember the variable; its effect is measured by
benchmarks/soak.py (see benchmarks/README.md). Called once at server start, before any thread exists; glibc
on Linux only, and an explicit ``MALLOC_ARENA_MAX`` in the environment wins.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2


def limit_arenas(n: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``n``; True when that was done here."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(M_ARENA_MAX, n) == 1
