"""A tool's input as a pydantic model: the JSON schema the model is shown is generated from it,
and a call's input is validated against it once, where the tool is run (`Tool.parse`), into the
typed object the tool reads.

The policy, the same for every built-in tool (docs/design/tool-inputs.md):
- An unknown field is ignored: a stray key from a model never fails a call (it never did), and
  hooks and permission rules still see the input exactly as the model sent it.
- An optional field is `T | None = None`: a model's explicit `null` means left out.
- A boolean is `SemanticBool`: `"yes"`/`"no"`/`"true"`/`"false"` are the booleans they name
  (models write them), any other string is refused.
- A number is taken where text is wanted (`"task_id": 3`), as the tools always did; a field
  that must not be (a file path, the Agent tool's inputs) is `Text` (strict).
- An input a person or the lead edits when approving (`--input`, AnswerPermission's
  `updated_input`) is checked exactly: JSON's own types and no unknown field (`exact`).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Strict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from swarm.core.records.protocol import semantic_bool


class ToolInput(BaseModel):
    """What a tool takes. `defer_build`: a model's validator is built at its first use, not at
    import (an agent starts without paying for the tools it never calls)."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, defer_build=True)


class NoInput(ToolInput):
    """The input of a tool that takes none."""


def _filled(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _blank_is_none(value: Any) -> Any:
    """An empty choice is no choice (`"isolation": ""`), as the tools always read it."""
    return None if isinstance(value, str) and not value.strip() else value


Text = Annotated[str, Strict()]  # a string, never a number made one
Filled = Annotated[str, Strict(), AfterValidator(_filled)]  # ... and not blank
BlankIsNone = BeforeValidator(_blank_is_none)
# A boolean a model gives: true/false, or the words "yes"/"no"/"true"/"false" (any case), as
# Claude Code's semantic booleans; never 1, "on" or another string. Shown as a boolean.
SemanticBool = Annotated[bool, BeforeValidator(semantic_bool), Strict()]


class _Shown(GenerateJsonSchema):
    """The schema as the model is shown it: types, enums, bounds, descriptions and the required
    list; no titles, no defaults, and an optional field without its `null` (leaving the field
    out says the same)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        shown = super().dict_schema(schema)
        if shown.get("additionalProperties") is True:  # any object: what "object" says alone
            del shown["additionalProperties"]
        return shown

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        shown = super().literal_schema(schema)
        if "const" in shown:  # a choice of one is still a choice (`"enum": ["worktree"]`)
            shown["enum"] = [shown.pop("const")]
        return shown

    def generate(self, schema: core_schema.CoreSchema, mode: Any = "validation") -> JsonSchemaValue:
        shown = super().generate(schema, mode)
        return {"type": "object", "properties": shown.get("properties", {}),
                "required": shown.get("required", [])}


@cache
def schema_of(model: type[ToolInput]) -> dict[str, Any]:
    """The JSON schema of a tool's input, built once per model (it is sent with every request)."""
    return model.model_json_schema(schema_generator=_Shown)


def validate(model: type[ToolInput], args: dict[str, Any], exact: bool = False) -> ToolInput:
    """The typed input; raises ValidationError. `exact`: JSON's own types, no unknown field."""
    if exact:
        return model.model_validate(args, strict=True, extra="forbid")
    return model.model_validate(args)


def problems(exc: ValidationError) -> str:
    """Every problem, one `field: what is wrong` each (a list item as `field.2`)."""
    seen: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        # A union's branches add their type names to the location: the field is enough.
        where = ".".join(str(p) for p in loc[:1] + tuple(p for p in loc[1:] if isinstance(p, int)))
        what = str(error.get("ctx", {}).get("error")) if error["type"] == "value_error" \
            else error["msg"]
        found = seen.setdefault(where or "input", [])
        if what not in found:
            found.append(what)
    return "; ".join(f"{where}: {' or '.join(whats)}" for where, whats in seen.items())
