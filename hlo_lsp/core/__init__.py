"""Protocol-agnostic core: readers, model, index, workspace. Never imports pygls or lsprotocol."""
