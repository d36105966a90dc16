"""Which whole-document answers are computed in a forked child (`handlers_document._in_child`): those of a
document between `CHILD_MIN_CHARS` and `CHILD_MAX_CHARS`. Beyond it the fork of the process holding its model holds
the GIL longer than the answer's own work costs in a worker thread, and the answer is made there."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hlo_lsp.core.process import fork
from hlo_lsp.lsp import handlers_document as hd


class _Answers:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def wait_dispatched(self, limit, quiet=0.0):
        self.calls.append(f"batch quiet {quiet > 0}")
        return True

    def wait_short(self, limit):
        return True


def _ls(size: int):
    analysis = SimpleNamespace(size=size)
    ws = SimpleNamespace(analysis=lambda path: analysis, fork_locks=lambda: [])
    return SimpleNamespace(ws=ws, answers=_Answers())


@pytest.mark.parametrize(
    "size,forked",
    [
        (hd.CHILD_MIN_CHARS, False),
        (hd.CHILD_MIN_CHARS + 1, True),
        (hd.CHILD_MAX_CHARS, True),
        (hd.CHILD_MAX_CHARS + 1, False),
        (100_000_000, False),
    ],
)
@pytest.mark.parametrize("long_answer", [False, True])
def test_forked_only_between_the_bounds(size, forked, long_answer, monkeypatch):
    ls = _ls(size)
    monkeypatch.setattr(fork, "start", lambda fn, arg, **kw: ls.answers.calls.append("fork"))  # computed here
    monkeypatch.setattr(fork, "result", lambda child: None)
    assert hd._in_child(ls, "/x", lambda: "answer", long_answer=long_answer) == "answer"
    assert ("fork" in ls.answers.calls) is forked
    if forked:  # every fork (10 ms of GIL) waits until the client's batch is read and handled, input quiet
        assert ls.answers.calls.index("batch quiet True") < ls.answers.calls.index("fork")
