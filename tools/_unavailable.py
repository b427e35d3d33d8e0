"""Catalog entries whose backend has not been built yet: they fail clearly, never fake evidence."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from refgate.catalog.toolspec import ToolContext, ToolResult, ToolSpec


class AnyArgs(BaseModel):
    model_config = ConfigDict(extra="allow")


def unavailable_spec(
    name: str, description: str, *, read_only: bool = True, issues: tuple[str, ...] = ()
) -> ToolSpec:
    """A spec whose call returns a clear 'not available yet' error."""

    def _call(args: BaseModel, ctx: ToolContext) -> ToolResult:
        return ToolResult.failure(f"{name} is not available yet in this build of refgate")

    return ToolSpec(name, description, AnyArgs, _call, read_only=read_only, issues=issues)
