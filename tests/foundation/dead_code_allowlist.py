"""Entry points the dead-code check (test_dead_code.py) cannot see being called.

Each is called by a framework or by name from outside Python's import graph, never by our code.
Add a name here only with the caller that reaches it; everything else without a caller is deleted.
"""

#: Names called by a framework (name -> who calls it).
FRAMEWORK_HOOKS: dict[str, str] = {
    "__getattr__": "Python: the package root's lazy facade (PEP 562)",
    "list_commands": "click: the CLI's command table (refgate.cli.app)",
    "resolve_command": "click: the CLI's command table (refgate.cli.app)",
    "settings_customise_sources": "pydantic-settings: the settings' sources",
    "aembed_documents": "LangChain Embeddings: the async interface of the store's embedder",
    "aembed_query": "LangChain Embeddings: the async interface of the store's embedder",
    "_generate": "LangChain BaseChatModel: the scripted models' reply",
    "_llm_type": "LangChain BaseChatModel: the scripted models' type name",
    "log_message": "http.server: the scripted OpenAI server's request log",
    "do_GET": "http.server: the scripted OpenAI server's GET handler",
    "do_POST": "http.server: the scripted OpenAI server's POST handler",
    "readinto": "io.RawIOBase: read() of the capped ZIP member stream (retrieval/dart/archive.py)",
}

#: Interfaces: typing Protocols that state what an implementation provides (name -> implementers).
INTERFACES: dict[str, str] = {
    "ResearchBackend": "nodes/research/backends.py: ChatModelBackend, the benchmarks' backends",
}

#: Decorators that register a function where the framework calls it by name.
REGISTERING_DECORATORS: tuple[str, ...] = (
    "@capability",  # refgate.catalog.capabilities: EngineCall and RunPython call it by name
    "@*.command",  # Typer: a CLI command
    "@*.callback",  # Typer: a CLI group's callback
    "@*.tool",  # MCP: a tool of refgate's MCP server (refgate.cli.mcp_server)
    "@field_validator",  # pydantic
    "@model_validator",  # pydantic
)
