"""The name index of a module: instruction name -> the number of its first instruction (`NameIndex`).

A dict grows by doubling, and each doubling moves every entry it holds in one C call: made in the background
after the read, the 100 MB module's index of 640,000 names doubled at 361,000 of them for 12-18 ms with the GIL
held, while a hover waited (the GIL watcher: a 42 ms wait where the tokens' JSON took turns with it). A large
module's index is kept in several dicts, each name in the one its hash picks, so that none holds more than
`SHARD_NAMES` and no doubling moves more than two thirds of that (2-4 ms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping, Sequence
from itertools import chain

from hlo_lsp.core.process import pieces, turns

SHARD_NAMES = 131_072  # names per dict at most, as a rule: its last doubling moves 87,000 of them (2-4 ms, cold)


class NameIndex(MutableMapping[str, int]):
    """Name -> the number of its first instruction, in ``2 ** k`` dicts (one for a module of at most
    `SHARD_NAMES` names: a plain dict's speed); a name is in the dict its hash picks."""

    __slots__ = ("_shards", "_mask")

    def __init__(self, shards: int = 1):
        if shards < 1 or shards & (shards - 1):
            raise ValueError(f"shards must be a power of two, not {shards}")
        self._shards: list[dict[str, int]] = [{} for _ in range(shards)]
        self._mask = shards - 1

    @classmethod
    def first_of(cls, names: Sequence[str]) -> NameIndex:
        """The index of ``names`` (the first occurrence of a repeated name wins), made `pieces.PIECE` names at a
        time, giving way between (`turns.give_way`)."""
        n = len(names)
        shards = 1
        while n > shards * SHARD_NAMES:
            shards *= 2
        out = cls(shards)
        step = pieces.PIECE
        if shards == 1:  # from the last piece to the first, each read backwards: the first occurrence is kept
            d = out._shards[0]
            for a in reversed(range(0, n, step)):
                end = min(a + step, n)
                d.update(zip(reversed(names[a:end]), range(end - 1, a - 1, -1)))
                turns.give_way()
            return out
        # a Python loop over the names (the interpreter hands the GIL over every few hundred microseconds): 0.2 s
        # for the 100 MB module's 640,000 names in the background, where the one dict's C calls took 0.12 s
        shard, mask = out._shards, out._mask
        for a in range(0, n, step):
            for i, name in enumerate(names[a : a + step], a):
                d = shard[hash(name) & mask]
                if name not in d:
                    d[name] = i
            turns.give_way()
        return out

    def getter(self) -> Callable[[str], int | None]:
        """``get`` for a loop of lookups: the dict's own for one dict (a C call)."""
        if not self._mask:
            return self._shards[0].get
        shard, mask = self._shards, self._mask
        return lambda name: shard[hash(name) & mask].get(name)

    def get(self, name: str, default=None):
        return self._shards[hash(name) & self._mask].get(name, default)

    def __getitem__(self, name: str) -> int:
        return self._shards[hash(name) & self._mask][name]

    def __setitem__(self, name: str, i: int) -> None:
        self._shards[hash(name) & self._mask][name] = i

    def __delitem__(self, name: str) -> None:
        del self._shards[hash(name) & self._mask][name]

    def __contains__(self, name: object) -> bool:
        try:
            return name in self._shards[hash(name) & self._mask]
        except TypeError:  # (an unhashable key is in no dict)
            return False

    def __len__(self) -> int:
        return sum(map(len, self._shards))

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self._shards)

    def copy(self) -> NameIndex:
        """A copy as of now (one C call per dict)."""
        out = NameIndex(len(self._shards))
        out._shards = [d.copy() for d in self._shards]
        return out

    def __repr__(self) -> str:
        return f"NameIndex({len(self)} names in {len(self._shards)} dicts)"
