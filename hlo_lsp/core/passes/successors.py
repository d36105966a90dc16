"""What a pass made of the instructions it removed: each removed name's successors, the names the same file
added with its ``op_name`` and stack frame (of those, the ones of its shape and opcode when there are such, else of
its shape: a fusion takes its root's shape), and each added name's ``made_from``, the other way. This is how a trace
follows an instruction that a pass renamed or rebuilt (`history.Step.successors`)."""

from __future__ import annotations

from hlo_lsp.core.passes.blocks import kind, line_defining, tags

Tags = tuple[str, str | None]  # an instruction's op_name and stack frame (`blocks.tags`)
Where = tuple[str, int, dict[str, int]]  # a block's text, its line count, {name in it: its line}


def lines_of(where: list[Where]) -> list[tuple[str, str]]:
    """(name, its line's text) of the names `PassHistory._where_lines` found, in file order."""
    out = []
    for text, lines, at in where:
        names = sorted(at, key=at.__getitem__)
        if len(names) * 50 < lines:  # a few lines of a long block: found, not split
            out += [(n, line_defining(text, n, at[n])) for n in names]
        else:
            split = text.split("\n")
            out += [(n, split[at[n]]) for n in names]
    return out


def match(removed: list[tuple[str, str]], added: list[tuple[str, str]]) -> tuple[dict, dict]:
    """(successors, made_from) of a file that removed and added these (name, line)s: each removed name's
    successors are the names added with its op_name and stack frame (of those, the ones of its shape and opcode
    when there are such, else of its shape: a fusion takes its root's shape); each added name's made_from, the
    other way."""
    successors: dict[str, list[str]] = {}
    made_from: dict[str, list[str]] = {}
    gone_with: dict[Tags, list[str]] = {}  # (op_name, frame) -> the removed names
    alike: dict[tuple[Tags, str], list[str]] = {}  # (..., shape and opcode) -> the removed names
    gone: list[tuple[str, Tags, str]] = []
    for n, line in removed:
        found = tags(line)
        if found is not None:
            shape_op = kind(line)
            gone.append((n, found, shape_op))
            gone_with.setdefault(found, []).append(n)
            for key in kinds(found, shape_op):
                alike.setdefault(key, []).append(n)
    if not gone_with:
        return successors, made_from
    made: dict[Tags, list[str]] = {}
    made_alike: dict[tuple[Tags, str], list[str]] = {}
    for n, line in added:
        found = tags(line)
        if found is not None and found in gone_with:
            shape_op = kind(line)
            made.setdefault(found, []).append(n)
            keys = kinds(found, shape_op)
            for key in keys:
                made_alike.setdefault(key, []).append(n)
            made_from[n] = alike.get(keys[0]) or alike.get(keys[1]) or gone_with[found]
    for n, found, shape_op in gone:
        keys = kinds(found, shape_op)
        got = made_alike.get(keys[0]) or made_alike.get(keys[1]) or made.get(found)
        if got:
            successors[n] = got
    return successors, made_from


def kinds(found: Tags, shape_op: str) -> tuple[tuple[Tags, str], tuple[Tags, str]]:
    """The keys of an instruction among those of its op_name and frame: by shape and opcode, by shape alone."""
    return (found, shape_op), (found, "shape " + shape_op.rpartition(" ")[0])
