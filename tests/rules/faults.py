"""Fault injection over real dumps: each generator edits one file of a real module (in memory) and says, from the
dump text alone, which diagnostics must follow: (path, code, zero-based line). Scoring gives recall and
precision per code."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.rules.dumps import Module

_BITS = {
    "pred": 8,
    "s8": 8,
    "u8": 8,
    "s16": 16,
    "u16": 16,
    "s32": 32,
    "u32": 32,
    "s64": 64,
    "u64": 64,
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "c64": 64,
    "c128": 128,
    "s4": 4,
    "u4": 4,
}


@dataclass
class Fault:
    name: str
    module: str
    path: Path  # the edited file
    text: str  # its new text
    expected: set[tuple[Path, str, int]]
    check: tuple[Path, ...]  # files whose diagnostics are compared with `expected`


def _replace_line(text: str, n: int, new: str) -> str:
    lines = text.split("\n")
    lines[n] = new
    return "\n".join(lines)


def _edit(m: Module, kind: str, n: int, new: str) -> tuple[Path, str]:
    p = m.paths[kind]
    return p, _replace_line(m.texts[p], n, new)


def _fault(name: str, m: Module, kind: str, n: int, new: str, expected: list[tuple[str, str, int]]) -> Fault:
    p, text = _edit(m, kind, n, new)
    exp = {(m.paths[k], code, ln) for k, code, ln in expected}
    return Fault(name, m.name, p, text, exp, tuple(sorted({p} | {e[0] for e in exp})))


def _alone(m: Module) -> list[tuple[dict, dict]]:
    """(allocation, value) for allocations holding exactly one value."""
    vals = m.values()
    allocs = {a["index"]: a for a in m.allocations()}
    count = Counter(v["allocation"] for v in vals)
    return [(allocs[v["allocation"]], v) for v in vals if count[v["allocation"]] == 1]


def _packed(shape: str) -> int | None:
    mm = re.fullmatch(r"(\w+)\[([\d,]*)\](?:\{[^}]*\})?", shape)
    if mm is None or mm.group(1) not in _BITS:
        return None
    count = 1
    for d in filter(None, mm.group(2).split(",")):
        count *= int(d)
    return (count * _BITS[mm.group(1)] + 7) // 8


def _value_line(m: Module, v: dict, size: int | None = None, offset: int | None = None) -> str:
    line = m.lines("assignment")[v["line"]]
    if size is not None:
        line = re.sub(r"\(size=\d+,", f"(size={size},", line, count=1)
    if offset is not None:
        line = re.sub(r",offset=\d+\)", f",offset={offset})", line, count=1)
    return line


# ------------------------------------------------------------------------------------------------ buffer


def shifted_offset(m: Module) -> list[Fault]:
    for alloc, v in _alone(m):
        new = _value_line(m, v, offset=alloc["size"] - v["size"] + 1)
        return [
            _fault(
                "shifted offset",
                m,
                "assignment",
                v["line"],
                new,
                [("assignment", "buffer.slice-out-of-range", v["line"])],
            )
        ]
    return []


def grown_size(m: Module) -> list[Fault]:
    for alloc, v in _alone(m):
        new = _value_line(m, v, size=alloc["size"] - v["offset"] + 1)
        return [
            _fault(
                "grown size", m, "assignment", v["line"], new, [("assignment", "buffer.slice-out-of-range", v["line"])]
            )
        ]
    return []


def shrunk_size(m: Module) -> list[Fault]:
    for v in m.values():
        need = _packed(v["shape"])
        if need and need >= 2:
            new = _value_line(m, v, size=need - 1)
            exp = [("assignment", "buffer.size-below-shape", v["line"])]
            exp += sorted(_overlaps_after(m, v, v["offset"], need - 1))
            return [_fault("shrunk size", m, "assignment", v["line"], new, exp)]
    return []


def duplicate_id(m: Module) -> list[Fault]:
    vals = m.values()
    if not vals:
        return []
    v = vals[len(vals) // 2]
    line = m.lines("assignment")[v["line"]]
    return [
        _fault(
            "duplicate id",
            m,
            "assignment",
            v["line"],
            line + "\n" + line,
            [("assignment", "buffer.duplicate-value", v["line"] + 1)],
        )
    ]


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def _same_human(total: int, human: str) -> int:
    """A total other than ``total`` that the printed human size (``376.2KiB``) still describes, so only the sum
    check can notice the edit."""
    mm = re.fullmatch(r"([0-9.]+)([KMGT]?i?B)", human)
    num, unit = mm.group(1), _UNITS[mm.group(2)]
    decimals = len(num.split(".")[1]) if "." in num else 0
    for delta in range(1, 5000):
        for cand in (total + delta, total - delta):
            if cand > 0 and (unit == 1 and cand == total or unit > 1 and f"{cand / unit:.{decimals}f}" == num):
                return cand
    return total + 1


def wrong_total(m: Module) -> list[Fault]:
    t = m.total_line()
    if t is None:
        return []
    n, total = t
    line = m.lines("values")[n]
    human = re.search(r"\(([^()]*)\)$", line).group(1)
    new_total = _same_human(total, human)
    new = line.replace(f"Total bytes used: {total} ", f"Total bytes used: {new_total} ", 1)
    return [_fault("wrong total", m, "values", n, new, [("values", "buffers.total", n)])]


def wrong_report_total(m: Module) -> list[Fault]:
    if m.single:
        return []
    for n, line in enumerate(m.lines("memory-report")):
        mm = re.match(r"^Total bytes: (\d+) \(([^()]*)\)$", line)
        if mm:
            new = line.replace(mm.group(1), str(_same_human(int(mm.group(1)), mm.group(2))), 1)
            return [_fault("wrong report total", m, "memory-report", n, new, [("memory-report", "buffers.total", n)])]
    return []


def inverted_live_range(m: Module) -> list[Fault]:
    for _key, (s, e, n) in m.live().items():
        if s < e:
            line = m.lines("live-range")[n]
            new = line[: line.rindex(":") + 1] + f"{e}-{s}"
            return [_fault("inverted live range", m, "live-range", n, new, [("live-range", "live-range.inverted", n)])]
    return []


def beyond_schedule(m: Module) -> list[Fault]:
    mx = m.live_max()
    live = m.live()
    if mx is None:
        return []
    for _alloc, v in _alone(m):
        if v["key"] in live:
            s, e, n = live[v["key"]]
            line = m.lines("live-range")[n]
            new = line[: line.rindex(":") + 1] + f"{s}-{mx + 1}"
            return [
                _fault("end beyond max", m, "live-range", n, new, [("live-range", "live-range.beyond-schedule", n)])
            ]
    return []


def duplicate_step(m: Module) -> list[Fault]:
    seq = m.sequence()
    if len(seq) < 3:
        return []
    step, _name, n = seq[len(seq) // 2]
    prev = seq[len(seq) // 2 - 1][1]
    return [
        _fault(
            "name twice in sequence",
            m,
            "live-range",
            n,
            f"    {step}:{prev}",
            [("live-range", "live-range.duplicate-step", n)],
        )
    ]


def sequence_gap(m: Module) -> list[Fault]:
    seq = m.sequence()
    if len(seq) < 3:
        return []
    step, name, n = seq[len(seq) // 2]
    return [
        _fault(
            "sequence index skipped",
            m,
            "live-range",
            n,
            f"    {step + 1}:{name}",
            [("live-range", "live-range.sequence-index", n)],
        )
    ]


def missing_used_value(m: Module) -> list[Fault]:
    blocks = m.used_blocks()
    vals = {v["key"]: v for v in m.values()}
    for start, end, key in blocks:
        if key in vals:
            p = m.paths["values"]
            lines = m.texts[p].split("\n")
            text = "\n".join(lines[:start] + lines[end:])
            exp = {(m.paths["assignment"], "buffer.used-values-mismatch", vals[key]["line"])}
            return [Fault("used value deleted", m.name, p, text, exp, tuple(sorted({p, m.paths["assignment"]})))]
    return []


def _interferes(a: tuple[int, int], b: tuple[int, int], same_slice: bool) -> bool:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return lo < hi or (lo == hi and not same_slice)


def _overlaps_after(m: Module, b: dict, offset: int, size: int) -> set[tuple[str, str, int]]:
    """The overlaps the rule must report once value ``b`` sits at ``offset`` with ``size`` (the dump itself is
    clean): every other live value of its allocation sharing those bytes while interfering with ``b``."""
    live = m.live()
    allocs = {a["index"]: a for a in m.allocations()}
    al = allocs[b["allocation"]]
    if b["key"] not in live or al["color"] or al["thread_local"]:
        return set()
    rb = live[b["key"]][:2]
    exp = set()
    for c in m.values():
        if c["allocation"] != b["allocation"] or c["id"] == b["id"] or c["key"] not in live or c["size"] <= 0:
            continue
        if not (c["offset"] < offset + size and offset < c["offset"] + c["size"]):
            continue
        same = (c["offset"], c["size"]) == (offset, size)
        if _interferes(live[c["key"]][:2], rb, same):
            exp.add(("assignment", "buffer.overlap", max(c["line"], b["line"])))
    return exp


def _moved_onto(m: Module, mode: str) -> list[Fault]:
    """Move a value B onto the offset of a value A of the same allocation: ``live`` when both are live at once,
    ``touch`` when A's range ends where B's starts and B is smaller (the slices differ), ``touch-same`` for the
    legal case of a touch with the same slice. Expected: one overlap per value C sharing B's new bytes while
    interfering with B under the closed-interval rule, on the later-listed line of the two."""
    live = m.live()
    allocs = {a["index"]: a for a in m.allocations()}
    vals = [v for v in m.values() if v["key"] in live and v["size"] > 0]
    for i, a in enumerate(vals):
        al = allocs[a["allocation"]]
        if al["color"] or al["thread_local"]:
            continue
        for b in vals[i + 1 :]:
            if b["allocation"] != a["allocation"] or b["id"] == a["id"] or b["offset"] == a["offset"]:
                continue
            ra, rb = live[a["key"]][:2], live[b["key"]][:2]
            lo, hi = max(ra[0], rb[0]), min(ra[1], rb[1])
            if mode == "live":
                ok = lo < hi and b["size"] <= a["size"]
            elif mode == "touch":
                ok = lo == hi and ra[1] == rb[0] and b["size"] < a["size"]
            else:
                ok = lo == hi and ra[1] == rb[0] and b["size"] == a["size"]
            if not ok:
                continue
            new_off = a["offset"]
            exp = _overlaps_after(m, b, new_off, b["size"])
            new = _value_line(m, b, offset=new_off)
            name = {
                "live": "two live values on the same bytes",
                "touch": "touching ranges, slices differ",
                "touch-same": "touching ranges, same slice (legal)",
            }[mode]
            return [_fault(name, m, "assignment", b["line"], new, sorted(exp))]
    return []


def moved_onto_live(m: Module) -> list[Fault]:
    return _moved_onto(m, "live")


def moved_onto_touching(m: Module) -> list[Fault]:
    return _moved_onto(m, "touch")


def moved_onto_touching_same(m: Module) -> list[Fault]:
    return _moved_onto(m, "touch-same")


def peak_not_live(m: Module) -> list[Fault]:
    n_peak, rows = m.peak()
    live = m.live()
    if n_peak is None:
        return []
    for r in rows:
        keys = (
            [r["instruction"] + r["index"]] if r["index"] else [k for k in live if k.split("{")[0] == r["instruction"]]
        )
        if len(keys) != 1 or keys[0] not in live:
            continue
        s, e, n = live[keys[0]]
        if s <= n_peak - 1 and e >= n_peak:
            line = m.lines("live-range")[n]
            new = line[: line.rindex(":") + 1] + f"{s}-{n_peak - 1}"
            return [
                _fault(
                    "peak entry not live",
                    m,
                    "live-range",
                    n,
                    new,
                    [("live-range", "live-range.peak-not-live", r["line"])],
                )
            ]
    return []


def peak_cumulative(m: Module) -> list[Fault]:
    _n, rows = m.peak()
    rows = [r for r in rows if r["cumulative"] is not None]
    if len(rows) < 3:
        return []
    r = rows[len(rows) // 2]
    line = m.lines("live-range")[r["line"]]
    new = line.replace(f"(cumulative: {r['cumulative']} bytes)", f"(cumulative: {r['cumulative'] + 8} bytes)")
    return [
        _fault(
            "cumulative not a running sum",
            m,
            "live-range",
            r["line"],
            new,
            [("live-range", "live-range.peak-cumulative", r["line"])],
        )
    ]


BUFFER_FAULTS = (
    shifted_offset,
    grown_size,
    shrunk_size,
    duplicate_id,
    wrong_total,
    wrong_report_total,
    inverted_live_range,
    beyond_schedule,
    duplicate_step,
    sequence_gap,
    missing_used_value,
    moved_onto_live,
    moved_onto_touching,
    moved_onto_touching_same,
    peak_not_live,
    peak_cumulative,
)


# ------------------------------------------------------------------------------------------------ scoring


def score(results: list[tuple[Fault, set[tuple[Path, str, int]]]]) -> dict[str, dict[str, int]]:
    """Per code: tp, fn, fp over every fault run (observed = every diagnostic of the checked files)."""
    table: dict[str, dict[str, int]] = {}
    for fault, observed in results:
        for e in fault.expected | observed:
            row = table.setdefault(e[1], {"tp": 0, "fn": 0, "fp": 0})
            if e in fault.expected and e in observed:
                row["tp"] += 1
            elif e in fault.expected:
                row["fn"] += 1
            else:
                row["fp"] += 1
    return table


def format_table(table: dict[str, dict[str, int]], title: str) -> str:
    out = [title, f"{'code':34} {'TP':>4} {'FN':>4} {'FP':>4} {'recall':>7} {'precision':>9}"]
    for code in sorted(table):
        r = table[code]
        rec = r["tp"] / (r["tp"] + r["fn"]) if r["tp"] + r["fn"] else float("nan")
        prec = r["tp"] / (r["tp"] + r["fp"]) if r["tp"] + r["fp"] else float("nan")
        out.append(f"{code:34} {r['tp']:4} {r['fn']:4} {r['fp']:4} {rec:7.2f} {prec:9.2f}")
    return "\n".join(out)
