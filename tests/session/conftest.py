"""One server per test module (a function-scoped one would not share the module-scoped event loop), with every
publishDiagnostics recorded in ``client.published`` (the client keeps only the latest per document)."""

from lsprotocol import types as lsp

from tests.server_client import vscode_client


def _record_published(lsp_client) -> None:
    lsp_client.published = []
    original = lsp_client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        lsp_client.published.append(params)
        return original(params)

    lsp_client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record


client = vscode_client(after=_record_published)
