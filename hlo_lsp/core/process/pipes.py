"""Pipes that hold more than Linux's 64 kB, so that megabytes cross them in few turns of writer and reader."""

from __future__ import annotations

import os
import stat

PIPE_BYTES = 1 << 20  # the capacity asked (1 MB: what an unprivileged process may ask by default)


def widen(fd: int, size: int = PIPE_BYTES) -> int | None:
    """Ask Linux to make the pipe ``fd`` is an end of hold ``size`` bytes (``F_SETPIPE_SZ``; the limit for an
    unprivileged process is ``/proc/sys/fs/pipe-max-size``, 1 MB by default) instead of 64 kB; its capacity after,
    or None where ``fd`` is no pipe, the system has no such call or refuses it (nothing changes then)."""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    setter = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux, Python 3.10 and later
    if setter is None:
        return None
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        return fcntl.fcntl(fd, setter, size)
    except (OSError, ValueError):
        return None
