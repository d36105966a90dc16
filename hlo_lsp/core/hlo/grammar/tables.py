"""The stack-frame tables (``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames``) as one block:
each entry's keys, the ids it defines and the ids it refers to (`check_tables`)."""

from __future__ import annotations

from hlo_lsp.core.diagnostics import Diagnostic, Range, error, warning
from hlo_lsp.core.occurrences import Occurrence

from . import model
from .checks import BlockFacts
from .results import BlockResult

_TABLE_KIND = {
    "FileNames": "file_name",
    "FunctionNames": "function_name",
    "FileLocations": "file_location",
    "StackFrames": "stack_frame",
}
_TABLE_KEYS = {
    "FileLocations": frozenset({"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"}),
    "StackFrames": frozenset({"file_location_id", "parent_frame_id"}),
}
_REFS = {"file_name_id=": "file_name", "function_name_id=": "function_name", "file_location_id=": "file_location"}


def check_tables(tables: model.Tables) -> BlockResult:
    """The tables block's result: each entry's keys checked, its id a definition and the ids it names uses (a
    warning for one no table defines: XLA's parser, jaxlib 0.10.2, accepts dangling ids)."""
    occ: list[Occurrence] = []
    diags: list[Diagnostic] = []
    defs: dict[str, set[str]] = {k: set() for k in _TABLE_KIND.values()}
    uses: list[tuple[str, str, model.Tok]] = []
    for entry in tables.entries:
        kind = _TABLE_KIND[entry.table]
        t = entry.id_tok
        keys = _TABLE_KEYS.get(entry.table)
        if keys is not None:
            _entry_keys(entry, keys, diags)
        occ.append(Occurrence(t.line, t.col, t.end, kind, t.text, "def"))
        defs[kind].add(t.text)
        _entry_refs(entry, occ, uses, diags)
    for kind, key, n in uses:
        if key not in defs[kind]:
            code = "unknown-stack-frame" if kind == "stack_frame" else "unknown-table-id"
            message = f"no {kind.replace('_', ' ')} with id {key} in the tables above"
            diags.append(warning(Range(n.line, n.col, n.line, n.end), code, message))
    occ.sort(key=lambda o: (o.line, o.start))
    facts = BlockFacts(frames={k: 1 for k in defs["stack_frame"]})
    return BlockResult("tables", True, diags, occ, facts, table_defs=defs)


def _entry_keys(entry: model.TableEntry, keys: frozenset[str], diags: list[Diagnostic]) -> None:
    """An entry's ``key=N`` pairs: each an integer, each key one its table has, none missing."""
    t = entry.id_tok
    given = [v for v in entry.value if v.type == "ATTR_NAME"]
    for k, v in enumerate(entry.value):
        if v.type == "ATTR_NAME" and (k + 1 >= len(entry.value) or entry.value[k + 1].type != "INT"):
            diags.append(
                error(Range(v.line, v.col, v.line, v.end), "invalid-attribute", f"{v.text} expects an integer")
            )
    for v in given:
        if v.text[:-1] not in keys:
            diags.append(
                error(
                    Range(v.line, v.col, v.line, v.end - 1),
                    "unknown-attribute",
                    f"unexpected attribute '{v.text[:-1]}' in {entry.table}; allowed: " + ", ".join(sorted(keys)),
                )
            )
    missing = sorted(keys - {v.text[:-1] for v in given})
    if missing:
        diags.append(
            error(
                Range(t.line, t.col, t.line, t.end),
                "missing-attribute",
                f"{entry.table} entry {t.text} needs {', '.join(k + '=' for k in missing)}",
            )
        )


def _entry_refs(
    entry: model.TableEntry, occ: list[Occurrence], uses: list[tuple[str, str, model.Tok]], diags: list[Diagnostic]
) -> None:
    """The ids an entry refers to: an occurrence and a use (kind, id, token) each."""
    vals = entry.value
    for i, v in enumerate(vals[:-1]):
        if v.type != "ATTR_NAME" or vals[i + 1].type != "INT":
            continue
        n = vals[i + 1]
        if v.text in _REFS:
            occ.append(Occurrence(n.line, n.col, n.end, _REFS[v.text], n.text, "use"))
            uses.append((_REFS[v.text], n.text, n))
        elif v.text == "parent_frame_id=":
            # Printed as parent id + 1 (HloParserImpl::ParseStackFramesList); 1 means no parent.
            parent = int(n.text) - 1
            if parent > 0:
                occ.append(Occurrence(n.line, n.col, n.end, "stack_frame", str(parent), "use"))
                uses.append(("stack_frame", str(parent), n))
            elif parent < 0:
                message = "parent_frame_id= is the parent frame's id plus one; 0 is not valid"
                diags.append(warning(Range(n.line, n.col, n.line, n.end), "unknown-stack-frame", message))
