"""py-hello: an example rab plugin in Python, built with componentize-py.

It targets the `rab-plugin` world of `crates/rab-plugin-host/wit/plugin.wit`.
componentize-py (0.25+) generates the bindings as the module `wit_world`; the
plugin is the class named `WitWorld` deriving from `wit_world.WitWorld`.
A WIT `result<T, string>` is returned as `T` on success and raised as
`Err("message")` on failure.

Every module used at run time must be imported at the top of this file
(componentize-py snapshots the interpreter at build time).
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import host
from wit_world.imports.types import SlashCommand, ToolDef

WORD_COUNT_PARAMS = json.dumps(
    {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
)


class WitWorld(wit_world.WitWorld):
    def name(self) -> str:
        return "py-hello"

    def tools(self) -> list[ToolDef]:
        return [
            ToolDef(
                name="py_word_count",
                description="Counts the words (whitespace-separated) in a text.",
                parameters=WORD_COUNT_PARAMS,
                label="Word count",
            )
        ]

    def commands(self) -> list[SlashCommand]:
        return [SlashCommand(name="py-hello", description="Says hello from Python.")]

    def execute_tool(self, tool_name: str, tool_call_id: str, args_json: str) -> str:
        if tool_name != "py_word_count":
            raise Err(f"unknown tool: {tool_name}")
        try:
            args = json.loads(args_json)
        except ValueError as e:
            raise Err(f"invalid arguments: {e}")
        text = args.get("text") if isinstance(args, dict) else None
        if not isinstance(text, str):
            raise Err("missing string argument `text`")
        count = len(text.split())
        host.log("debug", f"py_word_count ({tool_call_id}): {count} words")
        return f"{count} word" if count == 1 else f"{count} words"

    def execute_command(self, name: str, args: str) -> str:
        if name != "py-hello":
            raise Err(f"unknown command: {name}")
        return f"hello from python: {args}"

    def self_test(self) -> None:
        return None

    def tool_levels(self) -> list[tuple[str, str]]:
        return [("py_word_count", "read-only")]
