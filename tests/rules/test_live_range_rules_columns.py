"""The live-range rules read the live-range files' columns (`rules.live_ranges`): on every real dump in tests/data and
on random edits of their live ranges and peak lists (inverted, negative, past the schedule, numbers past the int64
column, a value listed twice so that the later line wins, peak figures off, entries without their index), their
findings equal those of the same rules written over the records (`BufferValue.live_range`, `PeakEntry`), as they
were before they read columns."""

from __future__ import annotations

import random
import re

import pytest

from hlo_lsp.core.buffers.rules.context import Context, report, source
from hlo_lsp.core.buffers.rules.live_ranges import (
    _peak_cumulative_records,
    live_range_bounds,
    peak_cumulative,
    peak_not_live,
)
from hlo_lsp.core.diagnostics import error, warning
from hlo_lsp.core.workspace import Workspace
from tests.rules.dumps import modules

MODULES = [m for m in modules() if "live-range" in m.paths]
_LIVE = re.compile(r"^(    [^ :{]+\{[\d,]*\}:)(-?\d+)-(-?\d+)$")
_PEAK = re.compile(r"^(    [^ :{]+)(\{[\d,]*\})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?$")
WIDE = 1 << 64  # past the int64 columns: kept on the side (`Records.put`)


def _bounds_by_records(ctx):
    bs = ctx.bs
    mx = bs.live_range_max
    for v in bs.values_by_key.values():
        got = v.live_range
        if got is None:
            continue
        start, end = got
        if start > end:
            code = "live-range.inverted"
            message = f"{v.key} is live from {start} to {end}: the range ends before it starts"
        elif start < 0 or mx is not None and end > mx:
            code, message = "live-range.beyond-schedule", f"{v.key} is live {start}-{end}, outside the schedule 0-{mx}"
        else:
            continue
        at = v.live_range_at
        if at is not None:
            yield report(error, at, code, message)


def _peak_not_live_by_records(ctx):
    bs = ctx.bs
    n = bs.peak_step
    if n is None or bs.peak_at is None:
        return
    entries = bs.peak_entries
    for i in range(len(entries)):
        key = entries.key(i)
        if key is not None:
            v = bs.value(key)
            candidates = [v] if v is not None else []
        else:
            candidates = bs.values_of(entries.instruction[i])
        ranges = [v.live_range for v in candidates if v.live_range is not None]
        judged = ranges and all(s <= e for s, e in ranges)  # an inverted range is live_range_bounds' finding
        if judged and not any(s <= n <= e for s, e in ranges):
            p = entries._make(i)
            live = ", ".join(f"{s}-{e}" for s, e in ranges[:4])
            message = f"{p.name} is listed as live at the peak {n}, but is live {live}"
            yield report(warning, source(bs.peak_at.kind, p), "live-range.peak-not-live", message)


def _peak_cumulative_by_records(ctx):
    """The rule's path for a list of records, over the peak list's entries made one by one."""
    bs = ctx.bs
    if bs.peak_at is not None:
        yield from _peak_cumulative_records(bs.peak_at.kind, list(bs.peak_entries))


PAIRS = (
    (live_range_bounds, _bounds_by_records),
    (peak_not_live, _peak_not_live_by_records),
    (peak_cumulative, _peak_cumulative_by_records),
)


def _findings(text: str, path: str) -> list[tuple[list, list]]:
    ws = Workspace()
    ws.open(path, text, 1)
    bundle = ws.bundle(path, read_large=True)
    assert bundle.buffers is not None
    ctx = Context(bundle.buffers, {})
    return [(list(columns(ctx)), list(records(ctx))) for columns, records in PAIRS]


def _edited(text: str, rng: random.Random, mx: int) -> str:
    lines = text.split("\n")
    live = [n for n, line in enumerate(lines) if _LIVE.match(line)]
    peak = [n for n, line in enumerate(lines) if _PEAK.match(line)]
    steps = [0, 1, mx // 2, mx - 1, mx, mx + 1, -1, -7, WIDE, -WIDE]
    for n in rng.sample(live, min(len(live), rng.randint(1, 6))):
        m = _LIVE.match(lines[n])
        assert m is not None
        lines[n] = f"{m.group(1)}{rng.choice(steps + [int(m.group(2))])}-{rng.choice(steps + [int(m.group(3))])}"
    for n in rng.sample(live, min(len(live), rng.randint(0, 3))):
        m = _LIVE.match(lines[n])
        assert m is not None  # the same value again a line later, with other steps: the later line wins
        lines[n] = lines[n] + "\n" + f"{m.group(1)}{rng.choice(steps)}-{rng.choice(steps)}"
    for n in rng.sample(peak, min(len(peak), rng.randint(0, 4))):
        m = _PEAK.match(lines[n])
        assert m is not None
        name, index, size, cumulative = m.groups()
        what = rng.randrange(3)
        if what == 0 and index:
            index = None  # a bare instruction name, as older dumps print it
        elif what == 1:
            size = str(rng.choice([0, 8, int(size) + 4, WIDE]))
        elif cumulative is not None:
            cumulative = str(rng.choice([0, int(cumulative) + 8, WIDE]))
        tail = f" (cumulative: {cumulative} bytes)" if cumulative is not None else ""
        lines[n] = f"{name}{index or ''}: {size} bytes{tail}"
    return "\n".join(lines)


def test_there_are_live_range_dumps():
    assert len(MODULES) >= 10
    assert any(m.single for m in MODULES) and any(not m.single for m in MODULES)


@pytest.mark.parametrize("m", MODULES, ids=lambda m: m.name)
def test_the_column_rules_find_what_the_record_rules_find(m):
    path = m.paths["live-range"]
    text = m.texts[path]
    mx = m.live_max() or 10
    for columns, records in _findings(text, str(path)):
        assert columns == records == []  # a real dump: nothing to find
    rng = random.Random(m.name)
    found = 0
    for _ in range(12):
        for columns, records in _findings(_edited(text, rng, mx), str(path)):
            assert columns == records
            found += len(columns)
    assert found  # the edits made the rules find something
