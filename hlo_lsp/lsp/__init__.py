"""The only package that knows the Language Server Protocol (pygls + lsprotocol)."""
