"""One server per test module (a function-scoped one would not share the module-scoped event loop), with every
publishDiagnostics recorded in ``client.published`` (the client keeps only the latest per document)."""

from tests.server_client import record_published, vscode_client

client = vscode_client(after=record_published)
