"""The process-wide memo tables (parsed shape texts, row-check verdicts, parameter signatures, grammar block
results, ...): each bounded, kept while documents are open because documents repeat the same texts, and
emptied by `clear_all` when the last document closes, so that memory follows what is open (issue 15: 250
documents opened and closed left 18 MB of memos behind)."""

from __future__ import annotations

from typing import Protocol, TypeVar


class _Clearable(Protocol):
    def clear(self) -> None: ...


T = TypeVar("T", bound=_Clearable)
_TABLES: list[_Clearable] = []


def memo_table(table: T) -> T:
    """Register ``table`` (a dict, or anything with ``clear``) to be emptied by `clear_all`; returns it."""
    _TABLES.append(table)
    return table


def clear_all() -> None:
    """Empty every registered memo table (they fill again on use)."""
    for table in _TABLES:
        table.clear()
