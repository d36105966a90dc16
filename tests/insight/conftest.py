"""The real server over stdio with VS Code's capabilities (`tests.server_client`)."""

from tests.server_client import vscode_client

client = vscode_client()
