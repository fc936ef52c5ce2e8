#![deny(missing_docs)]

//! rab-plugin-sdk: write a rab plugin in plain Rust — no `extern "C"`, no `#[repr(C)]`,
//! no `unsafe`. Implement [`Plugin`] for a type, call [`export_plugin!`] on it, and build
//! for `wasm32-wasip2`; the `.wasm` goes in `~/.rab/extensions/` (or a trusted project's
//! `.rab/extensions/`), and rab offers its tools to the model like its own.
//!
//! The bindings are generated from the WIT file rab's host uses
//! (`crates/rab-plugin-host/wit/plugin.wit`), so the two cannot drift. This crate owns
//! the guest side only; it depends on no host crate.
//!
//! ```no_run
//! use rab_plugin_sdk::*;
//!
//! struct MyPlugin;
//!
//! impl Plugin for MyPlugin {
//!     fn name() -> String {
//!         "my-tool".into()
//!     }
//!
//!     fn tools() -> Vec<ToolDef> {
//!         vec![ToolDef {
//!             name: "hello".into(),
//!             description: "Says hello".into(),
//!             parameters: json!({"type": "object", "properties": {}}),
//!             label: "Hello Tool".into(),
//!         }]
//!     }
//!
//!     fn execute(tool: &str, call_id: &str, args: Value) -> Result<String, String> {
//!         let _ = args;
//!         match tool {
//!             "hello" => Ok(format!("Hello from plugin! call_id={call_id}")),
//!             _ => Err(format!("Unknown tool: {tool}")),
//!         }
//!     }
//! }
//!
//! export_plugin!(MyPlugin);
//! ```
//!
//! Optional: [`Plugin::level`] says what a tool can do, for rab's permission gate (a
//! tool not declared counts as `Execute` and is asked about); [`Plugin::commands`] and
//! [`Plugin::execute_command`] add `/commands`; [`Plugin::self_test`] is run when the
//! plugin loads. [`host::log`] writes to rab's log and [`host::config`] reads the
//! plugin's `[config]` settings.

use std::marker::PhantomData;

pub use serde_json::{self, Value, json};

/// The bindings generated from `plugin.wit` (used by [`export_plugin!`]).
#[doc(hidden)]
#[allow(missing_docs, unsafe_code, clippy::all, clippy::pedantic, rust_2018_idioms)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../rab-plugin-host/wit/plugin.wit",
        world: "rab-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_rab_plugin",
        default_bindings_module: "rab_plugin_sdk::bindings",
    });
}

use bindings::rab::plugin::types;

/// A tool the plugin offers the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    /// The tool's name as the model calls it: letters, digits, `_` and `-`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments (an object schema).
    pub parameters: Value,
    /// A short title for the UI.
    pub label: String,
}

/// A command a person runs as `/name args`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlashCommand {
    /// The name, without the slash.
    pub name: String,
    /// One line for `/help`.
    pub description: String,
}

/// What a tool can do, for rab's permission gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Only reads: runs without a question.
    ReadOnly,
    /// Changes files: asked about like `edit`.
    Edit,
    /// Runs something: asked about like `bash` (the default).
    Execute,
    /// Reaches the network: asked about like `web_fetch`.
    Network,
}

impl Level {
    /// The name the host reads (`read-only`, `edit`, `execute`, `network`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Edit => "edit",
            Self::Execute => "execute",
            Self::Network => "network",
        }
    }
}

/// A rab plugin. Every function is an associated function: a plugin keeps no state
/// between calls that rab could see (an instance may be replaced at any time, after a
/// trap or a reload).
pub trait Plugin {
    /// The plugin's name (its tools and commands are listed under it).
    fn name() -> String;

    /// The tools it offers.
    fn tools() -> Vec<ToolDef>;

    /// Runs `tool` with the model's arguments: the text the model gets back, or an error
    /// message it sees as a failed call.
    fn execute(tool: &str, call_id: &str, args: Value) -> Result<String, String>;

    /// What `tool` can do; a tool not declared counts as [`Level::Execute`].
    fn level(tool: &str) -> Level {
        let _ = tool;
        Level::Execute
    }

    /// The commands it offers (none by default).
    fn commands() -> Vec<SlashCommand> {
        Vec::new()
    }

    /// Runs a command: the text to show, or an error.
    fn execute_command(name: &str, args: &str) -> Result<String, String> {
        let _ = args;
        Err(format!("unknown command: {name}"))
    }

    /// Checked when the plugin loads: an error skips it, with the message as the reason.
    fn self_test() -> Result<(), String> {
        Ok(())
    }
}

/// What rab offers a plugin.
pub mod host {
    use crate::bindings::rab::plugin::host;

    /// How important a log line is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum LogLevel {
        /// Something failed.
        Error,
        /// Something looks wrong.
        Warn,
        /// Worth knowing.
        Info,
        /// For finding a bug.
        Debug,
        /// Everything.
        Trace,
    }

    /// Writes `message` to rab's log (`~/.rab/logs/rab.log`, as `RAB_LOG` allows),
    /// tagged with the plugin's name.
    pub fn log(level: LogLevel, message: &str) {
        let level = match level {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        };
        host::log(level, message);
    }

    /// The plugin's `[config]` settings (from its `config.toml` and `extensions.toml`),
    /// an empty object without any.
    pub fn config() -> serde_json::Value {
        serde_json::from_str(&host::config())
            .unwrap_or_else(|_| serde_json::Value::Object(Default::default()))
    }
}

/// The WIT exports of a [`Plugin`] (what [`export_plugin!`] hands to the bindings).
#[doc(hidden)]
pub struct Exported<P>(PhantomData<P>);

impl<P: Plugin> bindings::Guest for Exported<P> {
    fn name() -> String {
        P::name()
    }

    fn tools() -> Vec<types::ToolDef> {
        P::tools()
            .into_iter()
            .map(|t| types::ToolDef {
                name: t.name,
                description: t.description,
                parameters: t.parameters.to_string(),
                label: t.label,
            })
            .collect()
    }

    fn commands() -> Vec<types::SlashCommand> {
        P::commands()
            .into_iter()
            .map(|c| types::SlashCommand { name: c.name, description: c.description })
            .collect()
    }

    fn execute_tool(
        tool_name: String,
        tool_call_id: String,
        args_json: String,
    ) -> Result<String, String> {
        let args: Value = if args_json.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(&args_json)
                .map_err(|e| format!("the arguments are not valid JSON: {e}"))?
        };
        P::execute(&tool_name, &tool_call_id, args)
    }

    fn execute_command(name: String, args: String) -> Result<String, String> {
        P::execute_command(&name, &args)
    }

    fn self_test() -> Result<(), String> {
        P::self_test()
    }

    fn tool_levels() -> Vec<(String, String)> {
        P::tools()
            .into_iter()
            .map(|t| (t.name.clone(), P::level(&t.name).as_str().into()))
            .collect()
    }
}

/// Exports a [`Plugin`] as the component's `rab:plugin` world. Call it once, at the
/// crate's top level.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        type __RabPluginExports = $crate::Exported<$plugin>;
        $crate::bindings::__export_rab_plugin!(__RabPluginExports with_types_in $crate::bindings);
    };
}

#[cfg(test)]
mod tests {
    use super::bindings::Guest;
    use super::*;

    struct Hello;

    impl Plugin for Hello {
        fn name() -> String {
            "hello".into()
        }
        fn tools() -> Vec<ToolDef> {
            vec![
                ToolDef {
                    name: "greet".into(),
                    description: "Greets".into(),
                    parameters: json!({"type": "object"}),
                    label: "Greet".into(),
                },
                ToolDef {
                    name: "run".into(),
                    description: "Runs".into(),
                    parameters: json!({}),
                    label: "Run".into(),
                },
            ]
        }
        fn execute(tool: &str, call_id: &str, args: Value) -> Result<String, String> {
            Ok(format!("{tool} {call_id} {}", args["who"]))
        }
        fn level(tool: &str) -> Level {
            if tool == "greet" { Level::ReadOnly } else { Level::Execute }
        }
    }

    #[test]
    fn the_exports_translate_between_the_wit_and_the_trait() {
        type E = Exported<Hello>;
        assert_eq!(E::name(), "hello");
        assert_eq!(E::tools()[0].parameters, r#"{"type":"object"}"#);
        assert_eq!(
            E::tool_levels(),
            [
                ("greet".to_owned(), "read-only".to_owned()),
                ("run".to_owned(), "execute".to_owned())
            ]
        );
        assert_eq!(
            E::execute_tool("greet".into(), "c1".into(), r#"{"who":"you"}"#.into()),
            Ok("greet c1 \"you\"".into())
        );
        let bad = E::execute_tool("greet".into(), "c1".into(), "{".into()).unwrap_err();
        assert!(bad.starts_with("the arguments are not valid JSON"), "{bad}");
        assert_eq!(E::execute_command("x".into(), "".into()), Err("unknown command: x".into()));
        assert_eq!(E::self_test(), Ok(()));
        assert!(E::commands().is_empty());
    }
}
