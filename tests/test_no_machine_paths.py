"""No tracked file names one machine's absolute path: a home folder (under /home, /Users, C:\\Users, or root's
home) or a folder of this project's build machine (under /work). Such a path means something only
where it was written: a test that reads it silently sees nothing elsewhere, and a dump that carries it points
nowhere. Paths under `/tmp/` are allowed: they are scratch defaults that exist on every POSIX machine
(`/tmp/bench` for the benchmark inputs) or strings inside hand-written fixtures, not one machine's layout.
"""

from __future__ import annotations

import re
import subprocess

from tests.fixtures import REPO

# written in pieces so that this file does not match itself
_SEP = "/"
MACHINE_PATH = re.compile(
    r"(?<![\w.~-])(?:"
    + _SEP
    + r"home"
    + _SEP
    + r"[A-Za-z0-9_.-]+"
    + _SEP
    + r"|"
    + _SEP
    + r"Users"
    + _SEP
    + r"[A-Za-z0-9_.-]+"
    + _SEP
    + r"|"
    + _SEP
    + r"root"
    + _SEP
    + r"|"
    + _SEP
    + r"work"
    + _SEP
    + r"|[A-Za-z]:\\\\?Users\\\\?"
    + r")"
)
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", "bundled", "out", "dist", "build"}


def tracked_files() -> list[str]:
    """The repository's tracked files (git ls-files), else every file under it outside build and cache dirs."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        return [
            str(p.relative_to(REPO))
            for p in REPO.rglob("*")
            if p.is_file() and not SKIP_DIRS & set(p.relative_to(REPO).parts[:-1])
        ]


def test_pattern_catches_machine_paths():
    """The pattern itself: home folders and the build machine's paths match, generic /tmp paths do not."""
    bad = [
        "/" + "home/alice/x.py",
        '"/' + 'work/main/tests/data/diff/mlp_predict.py"',
        "/" + "root/.cache/x",
        "/" + "Users/bob/src",
        "C:\\" + "Users\\carol\\x",
        "see /" + "work/shared",
    ]
    good = ["/tmp/bench", "/tmp/x.py", "framework/", "../shared", "homework/", "~/.cache/hlo-lsp", "/usr/bin/nvim"]
    assert all(MACHINE_PATH.search(s) for s in bad), [s for s in bad if not MACHINE_PATH.search(s)]
    assert not any(MACHINE_PATH.search(s) for s in good), [s for s in good if MACHINE_PATH.search(s)]


def test_no_machine_absolute_path_in_tracked_files():
    files = tracked_files()
    assert len(files) > 100, files[:10]
    found = []
    for rel in files:
        path = REPO / rel
        if MACHINE_PATH.search(rel):
            found.append(f"{rel}: (the file name)")
        try:
            data = path.read_bytes()
        except OSError:  # listed by git but deleted in the work tree
            continue
        if b"\0" in data[:8192]:
            continue  # binary (images)
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            m = MACHINE_PATH.search(line)
            if m:
                found.append(f"{rel}:{n}: {line.strip()[:160]}")
    assert not found, "absolute machine paths in tracked files:\n" + "\n".join(found[:50])
