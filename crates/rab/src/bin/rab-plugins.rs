//! `rab-plugins`: rab's plugin helper, installed next to `rab`. It holds the WebAssembly
//! engine, so `rab` itself does not: rab starts it only when a plugin is there.
//! - `rab-plugins serve`: serves one rab process over stdin/stdout (one JSON object a
//!   line; see rab-plugin-host's `wire` module) until stdin closes;
//! - `rab-plugins list HOME CWD trusted|untrusted`: prints the plugins as `rab plugin
//!   list` shows them.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["serve"] => {
            let stdin = std::io::stdin().lock();
            match rab_plugin_host::serve::serve(stdin, Box::new(std::io::stdout())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("rab-plugins: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        ["list", home, cwd, trust @ ("trusted" | "untrusted")] => {
            let text =
                rab_plugin_host::serve::list(Path::new(home), Path::new(cwd), *trust == "trusted");
            let mut out = std::io::stdout().lock();
            match writeln!(out, "{text}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        _ => {
            eprintln!(
                "rab-plugins is rab's plugin helper; rab runs it. Usage: rab-plugins serve | \
                 rab-plugins list HOME CWD trusted|untrusted"
            );
            ExitCode::from(2)
        }
    }
}
