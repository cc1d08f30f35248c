"""The MCP tool server: JSON-RPC 2.0 dispatch and the tool registry."""
