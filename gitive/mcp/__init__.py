"""The MCP server (``gitive mcp``): team memory for coding agents over stdio.

Only :mod:`gitive.mcp.server` imports the ``mcp`` SDK (about 0.66 s), and only the ``gitive mcp`` command
imports that module; every other module here is plain library code the tools call, usable and testable
without the SDK.
"""
