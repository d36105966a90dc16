"""Give freed memory back to the operating system after reading a large document.

Reading a 23 MB module allocates and frees tens of MB of short-lived objects (each computation's rows, the
joined text); glibc keeps the freed heap pages mapped, so the resident size of the server stays ~60 MB above
what it uses. ``malloc_trim(0)`` returns them (it also releases free pages inside the heap, not only at its
top). Linux with glibc only; elsewhere, or when the call is unavailable, nothing happens.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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
