//! `rab plugin new|build|list`: make a Rust plugin from a template, build it for
//! `wasm32-wasip2` (saying how to install the target when it is missing) and install
//! it, and list what this folder loads. `new` and `build` work in every build of rab;
//! `list` needs the `plugins` feature.

use std::path::{Path, PathBuf};
use std::process::Command;

use rab_config::{Env, Paths};

use crate::cli::{Cli, PluginCommand};
use crate::{EXIT_OK, EXIT_PROVIDER, EXIT_USAGE, fail};

/// The contract, as the host reads it: copied into every new plugin.
const WIT: &str = include_str!("../../rab-plugin-host/wit/plugin.wit");

/// The Rust target plugins are built for.
const TARGET: &str = "wasm32-wasip2";

/// Runs a `rab plugin` subcommand; the process's exit code.
pub fn run(action: &PluginCommand, cli: &Cli, env: &Env, paths: &Paths, cwd: &Path) -> u8 {
    let done = match action {
        PluginCommand::New { name, dir, sdk_path } => {
            new(name, dir.as_deref(), sdk_path.as_deref(), cwd)
        }
        PluginCommand::Build { dir, install, install_project } => {
            let dir = dir.as_deref().map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
            let dest = if *install {
                Some(paths.home().join("extensions"))
            } else if *install_project {
                Some(cwd.join(".rab/extensions"))
            } else {
                None
            };
            build(env, &dir, dest.as_deref())
        }
        PluginCommand::List { trust_project } => return list(cli, env, paths, cwd, *trust_project),
    };
    match done {
        Ok(()) => EXIT_OK,
        Err((code, message)) => fail(code, &message),
    }
}

type Failed = (u8, String);

/// Whether `name` can name a plugin and its crate.
fn check_name(name: &str) -> Result<(), Failed> {
    let usable = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if usable {
        Ok(())
    } else {
        Err((
            EXIT_USAGE,
            format!(
                "plugin name {name:?} cannot be used: it names the crate too, so use letters, \
                 digits, - and _, starting with a letter (at most 64)"
            ),
        ))
    }
}

/// `my-plugin` → `MyPlugin`.
fn type_name(name: &str) -> String {
    name.split(['-', '_'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `rab plugin new NAME`: Cargo.toml, src/lib.rs, wit/plugin.wit, .gitignore.
fn new(name: &str, dir: Option<&Path>, sdk: Option<&Path>, cwd: &Path) -> Result<(), Failed> {
    check_name(name)?;
    let dir = dir.map_or_else(|| cwd.join(name), |d| cwd.join(d));
    let is_empty = std::fs::read_dir(&dir).map(|mut r| r.next().is_none()).unwrap_or(true);
    if !is_empty {
        return Err((
            EXIT_USAGE,
            format!("{} is not empty; pick another name or --dir", dir.display()),
        ));
    }
    let sdk = match sdk {
        Some(path) => {
            let path = cwd.join(path);
            let manifest = std::fs::read_to_string(path.join("Cargo.toml")).unwrap_or_default();
            if !manifest.contains("name = \"rab-plugin-sdk\"") {
                return Err((
                    EXIT_USAGE,
                    format!(
                        "--sdk-path {}: no rab-plugin-sdk crate there (give a rab checkout's \
                         crates/rab-plugin-sdk)",
                        path.display()
                    ),
                ));
            }
            let path = path.canonicalize().unwrap_or(path);
            format!("{{ path = {} }}", toml_string(&path.to_string_lossy()))
        }
        // The SDK of this rab's own release, not whatever the main branch holds today.
        None => format!(
            "{{ git = {}, tag = {} }}",
            toml_string(env!("CARGO_PKG_REPOSITORY")),
            toml_string(concat!("v", env!("CARGO_PKG_VERSION")))
        ),
    };
    let files = [
        ("Cargo.toml", cargo_toml(name, &sdk)),
        ("src/lib.rs", lib_rs(name)),
        ("wit/plugin.wit", WIT.to_owned()),
        (".gitignore", "/target\n".to_owned()),
    ];
    for (file, text) in files {
        let path = dir.join(file);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(e) = written {
            return Err((EXIT_PROVIDER, format!("cannot write {}: {e}", path.display())));
        }
    }
    outln!("made plugin {name} in {}", dir.display());
    outln!("  src/lib.rs      its tools (one to start: hello)");
    outln!("  wit/plugin.wit  the contract with rab, for reference and other toolchains");
    outln!("next: cd {} && rab plugin build --install", dir.display());
    outln!("      (needs the Rust target: rustup target add {TARGET})");
    Ok(())
}

fn cargo_toml(name: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
rab-plugin-sdk = {sdk}
serde_json = "1"

[profile.release]
opt-level = "s"
lto = true
strip = true
"#
    )
}

fn lib_rs(name: &str) -> String {
    let ty = type_name(name);
    format!(
        r#"//! {name}: a rab plugin. `rab plugin build --install` builds it for wasm32-wasip2 and
//! puts it in ~/.rab/extensions/, where rab loads it (and reloads it when it changes).

use rab_plugin_sdk::*;

struct {ty};

impl Plugin for {ty} {{
    fn name() -> String {{
        "{name}".into()
    }}

    fn tools() -> Vec<ToolDef> {{
        vec![ToolDef {{
            name: "hello".into(),
            description: "Says hello to someone".into(),
            parameters: json!({{
                "type": "object",
                "properties": {{"who": {{"type": "string", "description": "Who to greet"}}}},
            }}),
            label: "Hello".into(),
        }}]
    }}

    fn execute(tool: &str, call_id: &str, args: Value) -> Result<String, String> {{
        match tool {{
            "hello" => {{
                let who = args["who"].as_str().unwrap_or("world");
                host::log(host::LogLevel::Debug, &format!("greeting {{who}}"));
                Ok(format!("Hello, {{who}}! (call {{call_id}})"))
            }}
            _ => Err(format!("unknown tool: {{tool}}")),
        }}
    }}

    // It reads nothing and changes nothing, so rab may run it without asking. A tool
    // not declared here counts as Level::Execute and is asked about.
    fn level(_tool: &str) -> Level {{
        Level::ReadOnly
    }}
}}

export_plugin!({ty});
"#
    )
}

/// `rab plugin build`: `cargo build --release --target wasm32-wasip2`, then the
/// component is copied to `install` when given.
fn build(env: &Env, dir: &Path, install: Option<&Path>) -> Result<(), Failed> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err((
            EXIT_USAGE,
            format!(
                "no Cargo.toml in {}: run rab plugin build in a plugin's folder (rab plugin \
                 new NAME makes one)",
                dir.display()
            ),
        ));
    }
    check_target(env, dir)?;
    let cargo = env.get("CARGO").unwrap_or("cargo").to_owned();
    let (lib, package, target_dir) = metadata(&cargo, &manifest)?;
    let status = Command::new(&cargo)
        .args(["build", "--release", "--target", TARGET, "--manifest-path"])
        .arg(&manifest)
        .current_dir(dir)
        .status()
        .map_err(|e| (EXIT_PROVIDER, format!("cannot run {cargo}: {e}")))?;
    if !status.success() {
        return Err((EXIT_PROVIDER, format!("cargo build failed ({status})")));
    }
    let built = target_dir.join(TARGET).join("release").join(format!("{lib}.wasm"));
    if !built.is_file() {
        return Err((
            EXIT_PROVIDER,
            format!("the build made no {}; is the crate a cdylib?", built.display()),
        ));
    }
    outln!("built {}", built.display());
    if let Some(dest) = install {
        let to = dest.join(format!("{package}.wasm"));
        install_file(&built, &to)
            .map_err(|e| (EXIT_PROVIDER, format!("cannot install it as {}: {e}", to.display())))?;
        outln!("installed as {} (sessions running reload it now)", to.display());
    }
    Ok(())
}

/// Whether the toolchain `dir` builds with has the target's standard library.
fn check_target(env: &Env, dir: &Path) -> Result<(), Failed> {
    let rustc = env.get("RUSTC").unwrap_or("rustc").to_owned();
    let out =
        Command::new(&rustc).args(["--print", "sysroot"]).current_dir(dir).output().map_err(
            |e| (EXIT_USAGE, format!("cannot run {rustc}: {e}; install Rust (rustup.rs)")),
        )?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err((
            EXIT_USAGE,
            format!(
                "{rustc} --print sysroot failed in {}: {}; a working Rust toolchain is needed \
                 (rustup.rs), with the target: rustup target add {TARGET}",
                dir.display(),
                why.trim()
            ),
        ));
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !sysroot.join("lib/rustlib").join(TARGET).is_dir() {
        return Err((
            EXIT_USAGE,
            format!(
                "the Rust target {TARGET} is not installed (the toolchain at {} has no \
                 lib/rustlib/{TARGET}); install it with: rustup target add {TARGET}",
                sysroot.display()
            ),
        ));
    }
    Ok(())
}

/// The crate's library name, package name and target folder, from `cargo metadata`.
fn metadata(cargo: &str, manifest: &Path) -> Result<(String, String, PathBuf), Failed> {
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .output()
        .map_err(|e| (EXIT_PROVIDER, format!("cannot run {cargo}: {e}")))?;
    if !out.status.success() {
        return Err((
            EXIT_USAGE,
            format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr).trim()),
        ));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| (EXIT_PROVIDER, format!("cargo metadata printed no JSON: {e}")))?;
    let target_dir = meta["target_directory"].as_str().map(PathBuf::from);
    let manifest = manifest.canonicalize().unwrap_or_else(|_| manifest.to_path_buf());
    let package = meta["packages"].as_array().and_then(|ps| {
        ps.iter().find(|p| {
            p["manifest_path"]
                .as_str()
                .map(Path::new)
                .is_some_and(|m| m.canonicalize().unwrap_or_else(|_| m.to_path_buf()) == manifest)
        })
    });
    let lib = package.and_then(|p| {
        p["targets"].as_array()?.iter().find_map(|t| {
            let kinds = t["kind"].as_array()?;
            kinds.iter().any(|k| k == "cdylib").then(|| t["name"].as_str().map(str::to_owned))?
        })
    });
    match (package, lib, target_dir) {
        (Some(p), Some(lib), Some(dir)) => {
            let name = p["name"].as_str().unwrap_or(&lib).to_owned();
            Ok((lib.replace('-', "_"), name, dir))
        }
        (None, ..) | (_, _, None) => {
            Err((EXIT_USAGE, format!("cargo metadata does not describe {}", manifest.display())))
        }
        (Some(_), None, _) => Err((
            EXIT_USAGE,
            "the crate has no cdylib library: add [lib] crate-type = [\"cdylib\"] to its \
             Cargo.toml"
                .to_owned(),
        )),
    }
}

/// Copies `from` to `to` through a temporary file in the same folder, so a watching rab
/// never loads half a file.
fn install_file(from: &Path, to: &Path) -> std::io::Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Not `.wasm`, so the watcher ignores it until the rename.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::copy(from, &tmp)?;
    std::fs::rename(&tmp, to).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// `rab plugin list`.
fn list(cli: &Cli, env: &Env, paths: &Paths, cwd: &Path, trust_project: bool) -> u8 {
    #[cfg(feature = "plugins")]
    {
        let trusted = match crate::trust::decide(cli, env, paths, cwd) {
            Ok(t) => t.trusted || trust_project,
            Err(e) => return fail(EXIT_USAGE, &e),
        };
        crate::plugins::list(paths.home(), cwd, trusted)
    }
    #[cfg(not(feature = "plugins"))]
    {
        let _ = (cli, env, paths, cwd, trust_project);
        fail(EXIT_USAGE, "this rab was built without WASM plugins (the `plugins` feature)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_types_and_bad_names_are_refused() {
        assert_eq!(type_name("my-plugin"), "MyPlugin");
        assert_eq!(type_name("a_b-c"), "ABC");
        assert!(check_name("word-count_2").is_ok());
        for bad in ["", "1x", "-x", "a b", "a/b", "ä", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(toml_string(r#"C:\a "b""#), r#""C:\\a \"b\"""#);
    }
}
