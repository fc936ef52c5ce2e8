//! Highlighter benchmark: what the first code block of a language costs.
//!
//! `cargo bench -p rab-tui --bench highlight` reports, for the languages models write
//! most, the time of the first render of a short block with a fresh [`Highlighter`]
//! (loading the syntax set, deserialising the grammar, compiling the regexes the text
//! reaches: the frame that first shows such a block pays this), the time of a second,
//! 20× longer render, and the resident memory the language added (`VmRSS`), then the
//! total after all of them. Each language is measured in a fresh highlighter, so every
//! "first" includes loading the syntax set; memory is measured in one highlighter across
//! the languages, as a session accumulates them (at most three stay compiled), before
//! the timings (so freed memory of the timing runs does not hide what a language adds).

use std::time::{Duration, Instant};

use rab_tui::highlight::Highlighter;
use rab_tui::theme::{ColorDepth, Theme};

/// Short, typical blocks of the ten most common languages in model answers, plus a few.
const SAMPLES: [(&str, &str); 16] = [
    (
        "rust",
        "use std::io;\nfn main() -> io::Result<()> {\n    let x: Vec<u8> = vec![1, 2];\n    println!(\"{}\", x.len()); // c\n    Ok(())\n}\n",
    ),
    (
        "python",
        "import os\nclass A:\n    def f(self, x: int) -> str:\n        return f\"{x}\"  # c\n",
    ),
    (
        "typescript",
        "import { a } from './a';\ninterface X { y: number }\nexport const f = async (x: X): Promise<string> => `${x.y}`; // c\n",
    ),
    ("javascript", "const a = require('a');\nfunction f(x) { return x ? [1, 2] : {a: 1}; } // c\n"),
    ("bash", "#!/bin/bash\nfor f in *.rs; do echo \"$f\" | grep -q x && rm -f \"$f\"; done\n"),
    ("json", "{\"a\": [1, 2.5, true, null], \"b\": {\"c\": \"d\"}}\n"),
    (
        "toml",
        "[package]\nname = \"x\"\nversion = \"0.1\"\n[dependencies]\nserde = { version = \"1\" }\n",
    ),
    (
        "yaml",
        "name: ci\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n",
    ),
    ("go", "package main\nimport \"fmt\"\nfunc main() { x := []int{1}; fmt.Println(x) }\n"),
    ("diff", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"),
    ("c", "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 1); return 0; }\n"),
    ("cpp", "#include <vector>\ntemplate<class T> struct A { std::vector<T> v; };\n"),
    ("java", "public class A { public static void main(String[] a) { System.out.println(1); } }\n"),
    (
        "html",
        "<!doctype html><html><head><style>a{color:red}</style><script>let x=1;</script></head></html>\n",
    ),
    ("markdown", "# Title\n\n- item `code`\n\n```rust\nfn a() {}\n```\n"),
    ("sql", "SELECT a, b FROM t WHERE c = 'x' ORDER BY a;\n"),
];

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    let Some(theme) = Theme::builtin("dark", ColorDepth::TrueColor) else {
        eprintln!("no built-in dark theme");
        std::process::exit(1);
    };
    println!("{:<11} {:>12} {:>12}", "language", "+RSS (KB)", "RSS (KB)");
    let h = Highlighter::new();
    let base = rss_kb();
    println!("{:<11} {:>12} {base:>12}", "(nothing)", 0);
    let mut last = base;
    for (lang, code) in SAMPLES {
        let _ = h.highlight(&code.repeat(20), lang, &theme);
        let now = rss_kb();
        println!("{lang:<11} {:>12} {now:>12}", now.saturating_sub(last));
        last = now;
    }
    println!("all {} languages: +{} KB over the empty highlighter", SAMPLES.len(), last - base);

    println!();
    println!("{:<11} {:>11} {:>13}", "language", "first", "again (x20)");
    let mut worst = (Duration::ZERO, "");
    for (lang, code) in SAMPLES {
        let h = Highlighter::new();
        let t = Instant::now();
        let lines = h.highlight(code, lang, &theme);
        let first = t.elapsed();
        assert!(lines.iter().any(|l| l.contains("\x1b[38;2;")), "{lang} was not highlighted");
        let big = code.repeat(20);
        let t = Instant::now();
        let _ = h.highlight(&big, lang, &theme);
        let again = t.elapsed();
        if first > worst.0 {
            worst = (first, lang);
        }
        println!("{lang:<11} {first:>11.2?} {again:>13.2?}");
    }
    println!("worst first render: {} ({:.2?})", worst.1, worst.0);
}
