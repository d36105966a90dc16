"""The JSON-RPC protocol of the server: pygls's, plus an answer for every request it would leave unanswered.

pygls drops two kinds of request without a reply, which leaves the editor waiting forever: a request whose
params cannot be read (the exception escapes `structure_message` into the read loop, which only logs it) and any
request after ``shutdown`` (logged, then ignored). Here the first is answered with InvalidParams and the second
with InvalidRequest, as the LSP specification asks; everything else is pygls's behaviour unchanged.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("hlo_lsp")
EXIT = "exit"


class _Answered:
    """Stands for a message already answered while it was being read; `handle_message` skips it."""

    jsonrpc = None


ANSWERED = _Answered()


class AnsweringProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            msg_id = data.get("id") if isinstance(data, dict) else None
            if msg_id is None or "method" not in data:
                raise  # a notification or response: nobody waits for an answer
            error = JsonRpcInvalidParams(message=f"cannot read the params of {data.get('method')!r}: {e}")
            self._send_response(msg_id, None, error.to_response_error())
            return ANSWERED

    def handle_message(self, message):
        if message is ANSWERED:
            return
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if self._shutdown and method not in (None, EXIT) and msg_id is not None:
            error = JsonRpcInvalidRequest(message=f"{method}: the server is shut down")
            self._send_response(msg_id, None, error.to_response_error())
            return
        super().handle_message(message)
