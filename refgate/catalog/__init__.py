"""What the agent can call, as plain declarations below the layers that implement it.

- ``toolspec``: the tool contract (``ToolSpec``, ``ToolContext``, ``ToolResult``);
- ``tool_names``: which tools exist and which pass may call which;
- ``capabilities``: the engine capability catalog (``@capability``, ``EngineEnv``, ``Evidence``);
- ``skillbook``: skill files parsed, validated and searchable.
"""
