"""The C heap of this process (glibc on Linux; elsewhere nothing happens): give freed memory back to the operating
system after reading a large document (`release_free_memory`), and keep few malloc arenas (`limit_arenas`).

Reading a 23 MB module allocates and frees tens of MB of short-lived objects (each computation's rows, the
joined text); glibc keeps the freed heap pages mapped, so the resident size of the server stays ~60 MB above
what it uses. ``malloc_trim(0)`` returns them (it also releases free pages inside the heap, not only at its
top). Linux with glibc only; elsewhere, or when the call is unavailable, nothing happens.

The server reads large documents in worker threads; glibc gives each thread its own arena (up to 8 per core),
and the tens of MB of short-lived objects a read frees stay mapped there, fragmented between what later reads
keep (an earlier 2,000-edit soak ended at 1.75x the RSS after open with ``MALLOC_ARENA_MAX=2``, 2.81x
without). `limit_arenas` sets the cap so that no one has to remember the variable; its effect is measured by
benchmarks/soak.py (see benchmarks/README.md). Called once at server start, before any thread exists; an
explicit ``MALLOC_ARENA_MAX`` in the environment wins.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

_trim = None
if sys.platform.startswith("linux"):
    try:
        _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        _trim.argtypes = [ctypes.c_size_t]
        _trim.restype = ctypes.c_int
    except (OSError, AttributeError):
        _trim = None


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system; True when that was possible here."""
    if _trim is None:
        return False
    _trim(0)
    return True


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
