"""``RunContext`` is written out as a class; what Studio and ``langgraph dev`` see of it (its JSON
schema: names, types, ranges, descriptions) must stay derived from ``Settings`` and the pass
table, so the class cannot drift from them."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

from refgate.config import CONTEXT_PASSES, CONTEXT_SETTINGS, RunContext, Settings, env_name


def derived_context() -> type[BaseModel]:
    """The context model as ``Settings`` and the pass table define it (how it was once built)."""
    fields: dict[str, object] = {}
    for name in CONTEXT_SETTINGS:
        info = Settings.model_fields[name]
        base = info.annotation
        if type(None) in getattr(base, "__args__", ()):  # int | None -> int
            base = next(a for a in base.__args__ if a is not type(None))  # type: ignore[union-attr]
        typed = Annotated[base, *info.metadata] if info.metadata else base  # type: ignore[valid-type]
        fields[name] = (
            Optional[typed],  # noqa: UP045 (a runtime-built annotation)
            Field(None, description=f"{info.description} ({env_name(name)})"),
        )
    for p in CONTEXT_PASSES:
        fields[f"model_{p}"] = (
            str | None,
            Field(None, description=f"{p.upper()}'s model string (default: model)"),
        )
    fields["workspace"] = (
        str | None,
        Field(
            None,
            description="workspace folder of the run (default: the input's, else "
            "REFGATE_WORKSPACE; bounded by REFGATE_ALLOWED_WORKSPACES)",
        ),
    )
    return create_model(  # type: ignore[call-overload,no-any-return]
        "RunContext",
        __config__=ConfigDict(extra="ignore"),
        __doc__="Per-run settings (Studio's editable context); unset fields keep the server's.",
        **fields,
    )


def test_the_fields_are_the_context_settings_the_pass_models_and_the_workspace():
    expected = [*CONTEXT_SETTINGS, *(f"model_{p}" for p in CONTEXT_PASSES), "workspace"]
    assert list(RunContext.model_fields) == expected


def test_the_schema_studio_sees_is_the_one_settings_define():
    assert RunContext.model_json_schema() == derived_context().model_json_schema()


def test_every_field_has_a_description_and_is_optional():
    for name, info in RunContext.model_fields.items():
        assert info.description, name
        assert info.default is None, name
    assert RunContext().model_dump(exclude_none=True) == {}


def test_extra_keys_are_ignored_and_ranges_hold():
    assert RunContext.model_validate({"model": "m", "unknown": 1}).model == "m"
    derived = derived_context()
    for bad in ({"work_max_rounds": 0}, {"timeout": 0}, {"max_tokens": 2_000_000}):
        for model in (RunContext, derived):
            try:
                model.model_validate(bad)
            except ValueError:
                continue
            raise AssertionError(f"{model.__name__} took {bad}")
