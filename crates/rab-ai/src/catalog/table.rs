//! The model table as people read it: `rab --list-models` prints it as text, and
//! docs/providers.md carries it as Markdown (a test keeps the two the same). One row
//! per model: prices per million tokens, cache prices, prompt-size tiers, the price
//! that follows an introductory one, the window and the input and output limits.

use crate::model::{Model, Rates, Registry};

/// How [`model_table`] lays the table out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns for a terminal.
    Text,
    /// A Markdown table per provider, each under the page its prices come from.
    Markdown,
}

const HEADERS: [&str; 9] = [
    "model",
    "$/M in / out",
    "cache read / write",
    "long prompts",
    "window",
    "max input",
    "max output",
    "thinking",
    "priced",
];

/// A number of dollars as short as it reads exactly (`2`, `0.125`, `-` for none).
fn dollars(v: f64) -> String {
    if v == 0.0 {
        return "-".to_owned();
    }
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn tokens(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 10_000 == 0 => {
            let m = format!("{:.2}", n as f64 / 1e6);
            format!("{}M", m.trim_end_matches('0').trim_end_matches('.'))
        }
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => {
            // Digits in groups of three: 1,048,576.
            let digits = n.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        }
    }
}

fn rates(r: &Rates) -> String {
    format!(
        "{} / {} / {} / {}",
        dollars(r.input),
        dollars(r.output),
        dollars(r.cache_read),
        dollars(r.cache_write)
    )
}

fn row(m: &Model, today: &str) -> [String; 9] {
    let c = &m.cost;
    let mut long: Vec<String> =
        c.tiers.iter().map(|t| format!("over {}: {}", tokens(t.above), rates(&t.rates))).collect();
    if let Some((last_day, standing)) = super::price_change_of(&m.provider, &m.id)
        && today <= last_day
    {
        long.push(format!("after {last_day}: {}", rates(&super::rates(standing))));
    }
    [
        format!("{}/{}", m.provider, m.id),
        format!("{} / {}", dollars(c.input), dollars(c.output)),
        format!("{} / {}", dollars(c.cache_read), dollars(c.cache_write)),
        if long.is_empty() { "-".to_owned() } else { long.join("; ") },
        tokens(m.context_window),
        m.max_input.map_or_else(|| "-".to_owned(), tokens),
        tokens(m.max_output),
        match (m.reasoning, m.compat.efforts.is_empty()) {
            (false, _) => "-".to_owned(),
            (true, true) => "yes".to_owned(),
            (true, false) => m.compat.efforts.join(" "),
        },
        c.as_of.clone().unwrap_or_else(|| "-".to_owned()),
    ]
}

/// The table of `registry`'s models whose `provider/id` contains `search` (any case;
/// empty: all), in `format`, with the introductory prices that still run today.
pub fn model_table(registry: &Registry, search: &str, format: TableFormat) -> String {
    model_table_on(registry, search, format, &super::today_utc())
}

/// [`model_table`] as of `today` (`YYYY-MM-DD`).
pub fn model_table_on(
    registry: &Registry,
    search: &str,
    format: TableFormat,
    today: &str,
) -> String {
    let search = search.to_ascii_lowercase();
    let models: Vec<&Model> = registry
        .models()
        .iter()
        .filter(|m| format!("{}/{}", m.provider, m.id).to_ascii_lowercase().contains(&search))
        .collect();
    let rows: Vec<[String; 9]> = models.iter().map(|m| row(m, today)).collect();
    match format {
        TableFormat::Text => text(&rows),
        TableFormat::Markdown => markdown(&models, &rows),
    }
}

fn text(rows: &[[String; 9]]) -> String {
    let mut widths = HEADERS.map(str::len);
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 9]| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}"));
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(HEADERS);
    for r in rows {
        out.push_str(&line(r.each_ref().map(String::as_str)));
    }
    out
}

fn markdown(models: &[&Model], rows: &[[String; 9]]) -> String {
    let mut out = String::new();
    let mut provider = "";
    for (r, m) in rows.iter().zip(models) {
        if m.provider != provider {
            provider = &m.provider;
            let source = super::price_source(provider).unwrap_or("models.json");
            out.push_str(&format!("\n**{provider}** ({source})\n\n"));
            out.push_str(&format!("| {} |\n", HEADERS.join(" | ")));
            out.push_str(&format!("|{}\n", "---|".repeat(HEADERS.len())));
        }
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The day the table in docs/providers.md was checked against the providers' pages.
    const DOCS_DAY: &str = "2026-11-28";
    const BEGIN: &str = "<!-- model table: begin -->\n";
    const END: &str = "<!-- model table: end -->";

    #[test]
    fn issue_35_the_model_table_in_the_docs_is_the_built_in_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/providers.md");
        let docs = std::fs::read_to_string(path).unwrap();
        let table =
            model_table_on(&Registry::builtin_on(DOCS_DAY), "", TableFormat::Markdown, DOCS_DAY);
        let start = docs.find(BEGIN).expect("the table's begin marker") + BEGIN.len();
        let end = docs.find(END).expect("the table's end marker");
        if std::env::var_os("RAB_BLESS").is_some() {
            let updated = format!("{}{table}{}", &docs[..start], &docs[end..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert!(
            docs[start..end] == table,
            "docs/providers.md's model table differs from the catalog; \
             RAB_BLESS=1 cargo test -p rab-ai issue_35_the_model_table rewrites it"
        );
    }

    #[test]
    fn an_introductory_price_holds_through_its_last_day_and_the_table_says_what_follows() {
        let argon = |day: &str| {
            let r = Registry::builtin_on(day);
            let m = r.models().iter().find(|m| m.id == "gemini-4-argon").unwrap().clone();
            (m.cost.input, m.cost.output, m.cost.cache_read)
        };
        assert_eq!(argon("2026-11-30"), (2.0, 10.0, 0.10));
        assert_eq!(argon("2026-12-01"), (4.0, 20.0, 0.20));
        let r = Registry::builtin_on("2026-11-28");
        let text = model_table_on(&r, "gemini-4-argon", TableFormat::Text, "2026-11-28");
        assert!(text.contains("after 2026-11-30: 4 / 20 / 0.2 / -"), "{text}");
        let later = Registry::builtin_on("2026-12-02");
        let text = model_table_on(&later, "gemini-4-argon", TableFormat::Text, "2026-12-02");
        assert!(!text.contains("after"), "{text}");
        assert!(text.contains("4 / 20"), "{text}");
    }

    #[test]
    fn today_is_a_calendar_date() {
        let today = crate::catalog::today_utc();
        assert_eq!(today.len(), 10, "{today}");
        assert!(today.as_str() >= "2026-01-01", "{today}");
        assert_eq!(&today[4..5], "-");
    }
}
