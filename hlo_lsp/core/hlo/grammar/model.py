"""Plain records built from one block's lark tree; the tree is dropped once these exist.

Positions are block-relative: ``line`` zero-based within the block, columns in code points, ``end``
exclusive.  Nesting in a tree is bounded by the block scanner's depth limit before any of this runs,
so the small recursive helpers here cannot reach Python's recursion limit; attribute values are
flattened with an explicit stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from lark import Token, Tree

_INT64_MAX = (1 << 63) - 1


@dataclass(slots=True)
class Tok:
    """One token of an attribute value or literal: lark's type name, text and position."""

    type: str
    text: str
    line: int
    col: int

    @property
    def end(self) -> int:
        return self.col + len(self.text)


@dataclass(slots=True)
class Name:
    text: str  # without the leading %
    line: int
    start: int
    end: int
    bare: bool  # written without %


@dataclass(slots=True)
class Shape:
    text: str  # canonical text without layout, e.g. "f32[2,3]" or "(f32[], s32[])"
    element: str | None  # primitive type; None for a tuple
    dims: tuple[str, ...]  # dimension texts for an array
    tuple_arity: int  # element count for a tuple, -1 for an array
    line: int
    col: int
    layout_rank: int = -1  # number of minor_to_major entries written, -1 without a layout
    layout_tok: Tok | None = None
    elements: tuple[Shape, ...] = ()  # a tuple's element shapes

    @property
    def is_scalar(self) -> bool:
        return self.element is not None and not self.dims

    @property
    def is_tuple(self) -> bool:
        return self.element is None

    def dim_sizes(self) -> list[int | None]:
        """Each dimension's size (a dynamic `<=N` dimension counts its bound N); None for `?`."""
        out: list[int | None] = []
        for d in self.dims:
            d = d.lstrip("<=")
            out.append(int(d) if d.isascii() and d.lstrip("-").isdigit() else None)
        return out

    def element_count(self) -> int | None:
        """Number of elements of an array with static dimensions; None for tuples, unknown sizes and counts
        beyond int64 (those get their own `shape-too-large` error; the early exit keeps 100,000 dimensions
        from building a 95,000-digit number that cannot even be printed)."""
        if self.element is None:
            return None
        n = 1
        for d in self.dim_sizes():
            if d is None:
                return None
            n *= d
            if n > _INT64_MAX:
                return None
        return n


@dataclass(slots=True)
class Attribute:
    name: str
    line: int
    start: int
    end: int  # end of the name (without '=')
    value: list[Tok]


@dataclass(slots=True)
class Instruction:
    name: Name | None  # None for a nested (inline) operand instruction
    root: Tok | None
    shape: Shape | None
    opcode: Tok
    operands: list[Operand]
    literal: list[Tok]  # tokens of literal arguments (constant(...), parameter(N))
    attributes: list[Attribute]
    nested: bool = False
    arg_count: int = 0
    close_paren: Tok | None = None
    equal: Tok | None = None  # the '=' after the name
    commas: int = 0  # commas in the operand list (XLA skips empty operands)


@dataclass(slots=True)
class Operand:
    name: Name | None
    shape: Shape | None
    nested: Instruction | None


@dataclass(slots=True)
class Computation:
    name: Name
    entry: Tok | None
    params: list[tuple[Name, Shape]]
    result: Shape | None
    instructions: list[Instruction]
    attributes: list[Attribute]
    open_brace: Tok | None = None


@dataclass(slots=True)
class Header:
    name: Name
    attributes: list[Attribute]


@dataclass(slots=True)
class TableEntry:
    table: str  # FileNames | FunctionNames | FileLocations | StackFrames
    id_tok: Tok
    value: list[Tok]


@dataclass(slots=True)
class Tables:
    entries: list[TableEntry] = field(default_factory=list)


def tok(t: Token) -> Tok:
    return Tok(t.type, str(t), (t.line or 1) - 1, (t.column or 1) - 1)  # the lexer sets both


def _token(node: Tree, k: int = 0) -> Token:
    """Child ``k`` of ``node``, a terminal where the grammar puts one there."""
    return cast(Token, node.children[k])


def flatten(node) -> list[Tok]:
    """Every token under ``node`` in order, without recursion."""
    out: list[Tok] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if isinstance(n, Token):
            out.append(tok(n))
        else:
            stack.extend(reversed(n.children))
    return out


def _name(tree: Tree) -> Name:
    t = tok(_token(tree))
    text = t.text
    bare = not text.startswith("%")
    return Name(text if bare else text[1:], t.line, t.col, t.col + len(text), bare)


def shape_of(node) -> Shape:
    if node.data == "tuple_shape":
        parts = [shape_of(c) for c in node.children if isinstance(c, Tree)]
        first = tok(_token(node))
        return Shape(
            "(" + ", ".join(p.text for p in parts) + ")",
            None,
            (),
            len(parts),
            first.line,
            first.col,
            elements=tuple(parts),
        )
    prim = tok(_token(node))
    dims: list[str] = []
    layout_rank = -1
    layout_tok = None
    for c in node.children[1:]:
        if c is None:
            continue
        if isinstance(c, Tree) and c.data == "dim":
            dims.append("".join(str(t) for t in c.children))
        elif isinstance(c, Tree) and c.data == "layout":
            layout_rank = sum(1 for t in c.children if isinstance(t, Token) and t.type == "INT")
            layout_tok = tok(_token(c))
    text = f"{prim.text}[{','.join(dims)}]"
    return Shape(text, prim.text, tuple(dims), -1, prim.line, prim.col, layout_rank, layout_tok)


def attribute_of(tree: Tree) -> Attribute:
    name_tok = tok(_token(tree))
    name = name_tok.text[:-1]
    return Attribute(name, name_tok.line, name_tok.col, name_tok.col + len(name), flatten(tree.children[1]))


def _operand_list(tree: Tree, instr: Instruction) -> None:
    for c in tree.children:
        if c is None:
            continue
        if isinstance(c, Token):
            if c.type == "RPAR":
                instr.close_paren = tok(c)
            elif c.type == "COMMA":
                instr.commas += 1
            continue
        instr.arg_count += 1
        if c.data == "operand":
            instr.operands.append(_operand(c))
        else:
            instr.literal.extend(flatten(c))


def _operand(tree: Tree) -> Operand:
    shape = None
    name = None
    nested_list = None
    for c in tree.children:
        if c is None or isinstance(c, Token):
            continue
        if c.data == "any_name":
            name = _name(c)
        elif c.data == "operand_list":
            nested_list = c
        else:
            shape = shape_of(c)
    if nested_list is None:
        return Operand(name, shape, None)
    opcode = Tok("NAME", name.text if name else "", name.line if name else 0, name.start if name else 0)
    if name is not None and not name.bare:
        opcode.text = "%" + name.text
    inner = Instruction(None, None, shape, opcode, [], [], [], nested=True)
    _operand_list(nested_list, inner)
    return Operand(None, shape, inner)


def instruction_of(tree: Tree) -> Instruction:
    root = None
    name = None
    shape = None
    opcode = None
    instr = Instruction(None, None, None, Tok("NAME", "", 0, 0), [], [], [])
    for c in tree.children:
        if c is None:
            continue
        if isinstance(c, Token):
            if c.type == "KW_ROOT":
                root = tok(c)
            elif c.type == "NAME":
                opcode = tok(c)
            elif c.type == "EQUAL" and instr.equal is None:
                instr.equal = tok(c)
            continue
        if c.data == "any_name":
            name = _name(c)
        elif c.data == "operand_list":
            _operand_list(c, instr)
        elif c.data == "attribute":
            instr.attributes.append(attribute_of(c))
        else:
            shape = shape_of(c)
    instr.name, instr.root, instr.shape = name, root, shape
    if opcode is not None:
        instr.opcode = opcode
    return instr


def computation_of(tree: Tree) -> Computation:
    entry = None
    name = None
    params: list[tuple[Name, Shape]] = []
    result = None
    instructions: list[Instruction] = []
    attributes: list[Attribute] = []
    open_brace = None
    for c in tree.children:
        if c is None:
            continue
        if isinstance(c, Token):
            if c.type == "KW_ENTRY":
                entry = tok(c)
            elif c.type == "LBRACE" and open_brace is None:
                open_brace = tok(c)
            continue
        if c.data == "any_name":
            name = _name(c)
        elif c.data == "signature":
            for s in c.children:
                if isinstance(s, Tree) and s.data == "param":
                    params.append((_name(s.children[0]), shape_of(s.children[2])))
                elif isinstance(s, Tree):
                    result = shape_of(s)
        elif c.data == "instruction":
            instructions.append(instruction_of(c))
        elif c.data == "attribute":
            attributes.append(attribute_of(c))
    assert name is not None, "the grammar gives every computation a name"
    return Computation(name, entry, params, result, instructions, attributes, open_brace)


def header_of(tree: Tree) -> Header:
    name = None
    attributes = []
    for c in tree.children:
        if isinstance(c, Tree):
            if c.data == "any_name":
                name = _name(c)
            elif c.data == "attribute":
                attributes.append(attribute_of(c))
    assert name is not None, "the grammar gives the module header a name"
    return Header(name, attributes)


def tables_of(tree: Tree) -> Tables:
    tables = Tables()
    current = ""
    for c in tree.children:
        if isinstance(c, Token):
            current = {
                "KW_FILENAMES": "FileNames",
                "KW_FUNCTIONNAMES": "FunctionNames",
                "KW_FILELOCATIONS": "FileLocations",
                "KW_STACKFRAMES": "StackFrames",
            }.get(c.type, current)
            continue
        toks = flatten(c)
        tables.entries.append(TableEntry(current, toks[0], toks[1:]))
    return tables
