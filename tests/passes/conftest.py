"""The real server over stdio with VS Code's capabilities; it may ask for lenses again
(pytest-lsp's client keeps the documents it was asked to show in ``shown_documents``)."""

from lsprotocol import types as lsp

from tests.server_client import vscode_client


def _answer_refresh(lsp_client) -> None:
    @lsp_client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(params):  # the server asks again once a pass history is built
        return None


client = vscode_client(before=_answer_refresh)
