"""A large message's document text decoded as it arrives (`stdio.MessageReader._streamed`): whatever the text
(quotes, backslashes, `\\n` spelled out, control characters, characters beyond the BMP as surrogate pairs or as
UTF-8, one long line), however the bytes arrive (pieces of any size, cut inside escapes and UTF-8 sequences), the
message is the one ``json.loads`` of the whole body makes; a body that is no valid JSON is given whole to the usual
parse (or, when the bytes of some of its text's pieces were let go, as the decoder's error), and the messages after
it are read as before."""

from __future__ import annotations

import json
import random
from contextlib import contextmanager

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_lsp.core.document import LineDocument
from hlo_lsp.lsp import stdio
from hlo_lsp.lsp.stdio import BadText, MessageReader, StreamedBody


class Trickle:
    """A stream that gives at most a random number of bytes per read (as a pipe does while the writer writes)."""

    def __init__(self, data: bytes, rng: random.Random, most: int) -> None:
        self.data, self.at, self.rng, self.most = data, 0, rng, most

    def read1(self, n: int) -> bytes:
        k = min(n, self.rng.randint(1, self.most))
        out = self.data[self.at : self.at + k]
        self.at += len(out)
        return out

    def fileno(self) -> int:
        raise OSError("no descriptor")


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _hook(d: dict) -> dict:
    return {"seen": sorted(d)} | d  # (the object hook is applied as json.loads applies it: to every object)


def _read_all(data: bytes, rng: random.Random, most: int) -> list:
    reader = MessageReader(Trickle(data, rng, most))
    out = []
    while (body := reader.next()) is not None:
        out.append(body)
    return out


def _loads(body) -> object:
    return body.loads(_hook) if isinstance(body, StreamedBody) else json.loads(body, object_hook=_hook)


def _did_open(text: str, ascii_only: bool, before: bool = False) -> bytes:
    doc = {"uri": "file:///m.hlo", "languageId": "hlo", "version": 3, "text": text}
    if before:
        doc = {"text": text, "uri": "file:///m.hlo"}
    msg = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}}
    return json.dumps(msg, ensure_ascii=ascii_only).encode()


@contextmanager
def _streamed_from_the_start():
    """Every body streamed, in pieces from its first bytes past the "text" key (`STREAM_HEAD`, about 110 bytes into
    the messages here): read whole up to `STREAM_HEAD` (64 kB), a short text would be one piece."""
    old = stdio.STREAM_MIN, stdio.STREAM_HEAD
    stdio.STREAM_MIN, stdio.STREAM_HEAD = 0, 160
    try:
        yield
    finally:
        stdio.STREAM_MIN, stdio.STREAM_HEAD = old


TEXT = st.lists(
    st.sampled_from(['"', "\\", "\n", "\\n", "n", "a", "%", "\t", "\x01", "é", "\U0001f600", "{", "}", "\r", "\ufeff"]),
    max_size=400,
).map("".join)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, st.booleans(), st.booleans(), st.integers(1, 40), st.integers(0, 10**6))
def test_a_streamed_text_is_the_text_json_decodes(text, ascii_only, before, most, seed):
    body = _did_open(text, ascii_only, before)
    with _streamed_from_the_start():
        got = _read_all(_frame(body) + _frame(b'{"after": 1}'), random.Random(seed), most)
    assert len(got) == 2 and isinstance(got[0], StreamedBody)
    assert _loads(got[0]) == json.loads(body, object_hook=_hook)
    assert got[1] == b'{"after": 1}'


def test_a_large_module_streamed_in_pipe_sized_pieces_is_decoded_as_a_whole():
    from tests.fixtures import DATA

    text = next(DATA.glob("jax-cpu/*/*after_optimizations.txt")).read_text()
    text = (text + "\n") * max(1, stdio.STREAM_MIN // len(text) + 1)
    body = _did_open(text, True)
    (got,) = _read_all(_frame(body), random.Random(1), 1 << 16)
    assert isinstance(got, StreamedBody) and len(got.json) < 300
    assert _loads(got) == json.loads(body, object_hook=_hook)


def test_bodies_with_no_valid_text_are_parsed_whole_as_before():
    stdio.STREAM_MIN, old_min = 0, stdio.STREAM_MIN
    try:
        bad = [
            b'{"method": "x", "params": {"text": "never ends}}',  # the string does not end
            b'{"params": {"text": "a\\qb"}}',  # an escape JSON has not
            b'{"params": {"text": "a\\u12"}}',  # a \\u escape cut short
            b'{"params": {"text": "a\x01b"}}',  # a raw control character
            b'{"params": {"text": "a\xffb"}}',  # no UTF-8
            b'{"params": {"text": "line\\n',  # the body ends inside it
            b'{"params": {"other": "\\"text\\": \\"x"}}',  # a "text" key inside a string is none
        ]
        for k, body in enumerate(bad):
            got = _read_all(_frame(body) + _frame(b"[1]"), random.Random(k), 5)
            assert got == [body, b"[1]"], body
    finally:
        stdio.STREAM_MIN = old_min


def test_a_text_found_no_valid_json_after_its_first_pieces_were_let_go_gives_the_decoders_error():
    """A piece's bytes are let go once decoded: a text that proves no valid JSON string further on can no longer
    be given whole, so it comes as a `BadText` (the decoder's error, which the server reports as the usual parse's;
    ``json.loads`` of the body fails too), the rest of its body is read, and the message after it is read."""
    stdio.STREAM_MIN, old_min = 0, stdio.STREAM_MIN
    try:
        lines = b'line \\n \\u00e9 \\"q\\"\\n' * 5000  # (JSON: escapes, quotes, newlines; past STREAM_HEAD)
        bad = [
            b'{"method": "x", "params": {"text": "' + lines + b"never ends}}",
            b'{"params": {"text": "' + lines + b'a\\qb"}}',
            b'{"params": {"text": "' + lines + b'a\\u12"}}',
            b'{"params": {"text": "' + lines + b'a\x01b"}}',
            b'{"params": {"text": "' + lines + b'a\xffb"}}',
        ]
        for k, body in enumerate(bad):
            try:
                json.loads(body)
                raise AssertionError(body)
            except ValueError:
                pass
            for most in (7, 64, 4096):
                got = _read_all(_frame(body) + _frame(b"[1]"), random.Random(k), most)
                assert len(got) == 2 and got[1] == b"[1]", (body[-20:], most)
                assert isinstance(got[0], BadText) and isinstance(got[0].error, ValueError), (body[-20:], most)
                assert got[0].head() == body[: body.index(b'"text": "') + 9]
    finally:
        stdio.STREAM_MIN = old_min


def test_the_input_ending_inside_a_streamed_body_ends_the_input():
    stdio.STREAM_MIN, old_min = 0, stdio.STREAM_MIN
    try:
        body = _did_open("a\nb\n" * 50, True)
        assert _read_all(_frame(body)[:-10], random.Random(3), 7) == []
    finally:
        stdio.STREAM_MIN = old_min


def test_a_large_bodys_bytes_are_let_go_once_it_is_read():
    """The reader's buffer keeps no large body once it is read (its bytes, 23 MB for the benchmark module, stayed
    until more input was wanted): streamed or read whole, the message after it is read from what is left."""
    for streamed in (True, False):
        text = "line\n" * (stdio.STREAM_MIN // 5 + 1)
        body = _did_open(text, True) if streamed else json.dumps({"x": text, "y": 1}).encode()
        reader = MessageReader(Trickle(_frame(body) + _frame(b"[2]"), random.Random(1), 1 << 20))
        first = reader.next()
        assert isinstance(first, StreamedBody) == streamed
        assert len(reader._buf) - reader._pos < 1 << 20 and reader._pos == 0
        assert reader.next() == b"[2]" and reader.next() is None


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT, st.booleans(), st.integers(1, 40), st.integers(0, 10**6))
def test_the_lines_split_as_the_text_arrives_are_the_documents_lines(text, ascii_only, most, seed):
    """The lines split piece by piece are the text's lines as the document splits them (none at a carriage return,
    which the document treats as a line end); the handler of that message takes them once, for that text only."""
    with _streamed_from_the_start():
        got = _read_all(_frame(_did_open(text, ascii_only)), random.Random(seed), most)
    body = got[0]
    assert isinstance(body, StreamedBody)
    if "\r" in text:
        assert body.lines is None
    else:
        assert body.lines == text.split("\n")
    opened = _loads(body)["params"]["textDocument"]["text"]
    lines = stdio.split_text(opened)
    assert lines is body.lines and stdio.split_text(opened) is None
    doc, fresh = LineDocument(opened, list(lines) if lines is not None else None), LineDocument(opened)
    assert doc.lines == fresh.lines and doc.kept_text() == fresh.kept_text() and doc.chars == fresh.chars


def test_lines_split_for_one_text_are_not_given_for_another():
    stdio.STREAM_MIN, old_min = 0, stdio.STREAM_MIN
    try:
        (body,) = _read_all(_frame(_did_open("a\nb", True)), random.Random(1), 5)
    finally:
        stdio.STREAM_MIN = old_min
    body.loads(_hook)
    assert stdio.split_text("a\nb") is None  # an equal text, not the message's own


def test_a_piece_may_end_inside_a_line():
    """A piece ends after the last ``\\n`` its bytes hold, which may be a backslash (written ``\\\\``) and an
    ``n``, inside a line: that line goes on in the next piece."""
    text = "a\\nb\nc\\n\\nd\n\\n"
    with _streamed_from_the_start():
        for most in (1, 2, 3):
            (body,) = _read_all(_frame(_did_open(text, True)), random.Random(most), most)
            assert body.lines == text.split("\n") == ["a\\nb", "c\\n\\nd", "\\n"]


def test_lines_no_handler_took_are_let_go_and_a_whole_text_change_takes_them():
    """The lines of a streamed text its handler did not take are dropped after that handler's first step (the
    server's read loop calls `forget_split`); a whole-text change takes them as an open does."""
    with _streamed_from_the_start():
        (body,) = _read_all(_frame(_did_open("x\ny\n" * 20, True)), random.Random(2), 9)
    text = _loads(body)["params"]["textDocument"]["text"]
    stdio.forget_split()
    assert stdio.split_text(text) is None
    with _streamed_from_the_start():
        (body,) = _read_all(_frame(_did_open("p\r\nq\n" * 3 + "z\n" * 30, True)), random.Random(3), 9)
    assert body.lines is None  # a carriage return: the document splits it
    doc, other = LineDocument("a\nb"), LineDocument("a\nb")
    new = "\ufeffc\nd\n\ne"
    doc.replace_all(new, new.split("\n"))
    other.replace_all(new)
    assert doc.lines == other.lines == ["c", "d", "", "e"] and doc.text == other.text and doc.generation == 1
