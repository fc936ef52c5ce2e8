//! The `web_fetch` tool: GETs an http(s) URL and gives the model its content: HTML
//! converted to markdown (with `htmd`; scripts, styles, navigation and forms left out),
//! other text as is, binary refused. At most 5 MB is read (`max_bytes`), at most 5
//! redirects followed, within the first URL's host only (a redirect elsewhere is told to
//! the model, whose next call the permission rules then see), the whole fetch takes at
//! most 30 s, and the model gets the first
//! 50 KB. Loopback, private and link-local addresses are refused unless the tool is
//! built to allow them (`web_fetch_guard.rs`).
//!
//! TLS is rab-ai's one stack (`rab_ai::http_client_builder`); the client is built
//! on the first fetch, and the roots load on its first TLS handshake. Proxy variables are ignored:
//! this crate does not read the environment, and a proxy would resolve names past the
//! address check.

use std::time::Duration;

use rab_agent::{
    ABORTED, RuleKind, Tool, ToolContext, ToolError, ToolFacts, ToolLevel, ToolOutput,
};
use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{StatusCode, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::truncate::{self, MAX_BYTES, format_size};

mod guard;

pub use guard::is_private as is_private_address;

use guard::{GuardedResolver, check_url};

/// Bytes read when the model does not say.
pub const DEFAULT_MAX_BYTES: usize = 5 * 1024 * 1024;
/// The most bytes the model may ask to read.
pub const MAX_MAX_BYTES: usize = 20 * 1024 * 1024;
/// Redirects followed.
pub const MAX_REDIRECTS: usize = 5;
/// The whole fetch, redirects and body included.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// Tags whose content is not the page's text.
const SKIPPED_TAGS: [&str; 12] = [
    "head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "nav", "footer",
    "form", "button",
];

/// Fetches a URL.
pub struct WebFetch {
    is_private_allowed: bool,
    client: tokio::sync::OnceCell<reqwest::Client>,
}

impl Default for WebFetch {
    fn default() -> Self {
        Self::new()
    }
}

impl WebFetch {
    /// The tool, refusing loopback, private and link-local addresses.
    pub fn new() -> Self {
        Self { is_private_allowed: false, client: tokio::sync::OnceCell::new() }
    }

    /// Lets the tool reach loopback, private and link-local addresses (a local docs
    /// server, tests).
    pub fn with_private_addresses(mut self, is_allowed: bool) -> Self {
        self.is_private_allowed = is_allowed;
        self
    }
}

/// Arguments of `web_fetch`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// http(s) URL.
    pub url: String,
    /// Most bytes to download (default 5 MB).
    pub max_bytes: Option<usize>,
}

impl Tool for WebFetch {
    type Args = Args;
    const NAME: &'static str = "web_fetch";
    const LEVEL: ToolLevel = ToolLevel::Network;
    const FACTS: ToolFacts = ToolFacts {
        rule: RuleKind::Domain,
        claude_names: &["WebFetch"],
        covered_by: &[],
        always_full: false,
    };

    fn description(&self) -> String {
        "Fetch a public http(s) URL. HTML comes back as markdown, other text as is, cut to \
         50KB; binary content is refused."
            .to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let url = Url::parse(args.url.trim()).map_err(|e| {
            ToolError::Model(format!("invalid URL {:?}: {e}; give a full http(s) URL", args.url))
        })?;
        let max_bytes = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).clamp(1, MAX_MAX_BYTES);
        let shown = url.to_string();
        let fetched = tokio::select! {
            fetched = tokio::time::timeout(TIMEOUT, self.fetch(url, max_bytes)) => {
                fetched.map_err(|_| {
                    ToolError::Model(format!("timed out after {}s fetching {shown}", TIMEOUT.as_secs()))
                })??
            }
            () = cx.cancel.cancelled() => return Err(ToolError::Model(ABORTED.to_owned())),
        };
        let fetched = match fetched {
            Step::Read(f) => f,
            Step::Elsewhere { from, to, status } => {
                let text = format!(
                    "{from} redirected (HTTP {}) to another host: {to}\nweb_fetch follows \
                     redirects only within one host, so that permission rules see every host \
                     it reaches; call web_fetch with {to} to fetch it.",
                    status.as_u16()
                );
                let details = json!({"url": from.as_str(), "status": status.as_u16(),
                                     "redirect": to.as_str()});
                return Ok(ToolOutput::text(text).with_details(details));
            }
        };
        tokio::task::spawn_blocking(move || render(fetched, &shown))
            .await
            .map_err(|e| ToolError::Model(format!("web_fetch failed: {e}")))?
    }
}

/// Where a fetch ended: a response read, or a redirect to another host (not followed:
/// the permission rules saw only the first; the model asks for it, and they see it).
enum Step {
    Read(Fetched),
    Elsewhere { from: Url, to: Url, status: StatusCode },
}

/// Whether `a` and `b` name the same host (any scheme and port).
fn same_host(a: &Url, b: &Url) -> bool {
    let host = |u: &Url| u.host_str().map(|h| h.trim_end_matches('.').to_ascii_lowercase());
    host(a).is_some() && host(a) == host(b)
}

/// A response as read.
struct Fetched {
    url: Url,
    status: StatusCode,
    content_type: String,
    body: Vec<u8>,
    /// Whether reading stopped at `max_bytes`.
    is_cut: bool,
    max_bytes: usize,
}

impl WebFetch {
    async fn client(&self) -> Result<&reqwest::Client, ToolError> {
        let is_private_allowed = self.is_private_allowed;
        self.client
            .get_or_try_init(|| async move {
                // Loading the platform's roots reads files: off the async threads.
                tokio::task::spawn_blocking(move || build_client(is_private_allowed))
                    .await
                    .map_err(|e| e.to_string())?
            })
            .await
            .map_err(|e| ToolError::Model(format!("cannot set up HTTP: {e}")))
    }

    /// GETs `url`, following redirects within its host and checking each hop, and
    /// reads the body.
    async fn fetch(&self, mut url: Url, max_bytes: usize) -> Result<Step, ToolError> {
        let client = self.client().await?;
        let mut redirects = 0;
        loop {
            check_url(&url, self.is_private_allowed).await.map_err(ToolError::Model)?;
            let response =
                client.get(url.clone()).send().await.map_err(|e| {
                    ToolError::Model(format!("fetching {url} failed: {}", causes(&e)))
                })?;
            let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
            if let (true, Some(location)) = (response.status().is_redirection(), location) {
                let next = url.join(location).map_err(|e| {
                    ToolError::Model(format!("{url} redirected to a bad URL {location:?}: {e}"))
                })?;
                if matches!(next.scheme(), "http" | "https") && !same_host(&url, &next) {
                    return Ok(Step::Elsewhere { from: url, to: next, status: response.status() });
                }
                redirects += 1;
                if redirects > MAX_REDIRECTS {
                    return Err(ToolError::Model(format!(
                        "too many redirects (more than {MAX_REDIRECTS}); the last one went to \
                         {next}"
                    )));
                }
                url = next;
                continue;
            }
            return read(url, response, max_bytes).await.map(Step::Read);
        }
    }
}

fn build_client(is_private_allowed: bool) -> Result<reqwest::Client, String> {
    guarded_client_builder(is_private_allowed)?
        .connect_timeout(TIMEOUT)
        .build()
        .map_err(|e| e.to_string())
}

/// An HTTP client that reaches only public addresses unless `is_private_allowed` (its
/// resolver refuses the rest when it connects, so DNS rebinding gets nowhere), follows
/// no redirect (each hop is the caller's to check) and ignores proxy settings: what
/// `web_fetch` uses, and WASM plugins granted the network.
pub fn guarded_client_builder(is_private_allowed: bool) -> Result<reqwest::ClientBuilder, String> {
    Ok(rab_ai::http_client_builder()?
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(GuardedResolver { is_private_allowed }))
}

/// Whether `e` (or what caused it) is the guard refusing an address.
pub fn is_refused_address(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.to_string().contains(guard::REFUSED) {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Reads the body, stopping at `max_bytes`.
async fn read(
    url: Url,
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Fetched, ToolError> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut body = Vec::new();
    let mut is_cut = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ToolError::Model(format!("reading {url} failed: {}", causes(&e))))?
    {
        let room = max_bytes - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            // Exactly full and at the end is not cut; anything more is.
            is_cut = chunk.len() > room || response.chunk().await.ok().flatten().is_some();
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched { url, status, content_type, body, is_cut, max_bytes })
}

/// An error with its causes: reqwest's own message rarely says what went wrong.
fn causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// What the body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

/// The kind from the content type, and from the bytes when it says nothing useful.
fn kind_of(content_type: &str, body: &[u8]) -> Kind {
    let mime = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let head = &body[..body.len().min(8192)];
    let is_binary = head.contains(&0)
        || std::str::from_utf8(head).is_err_and(|e| {
            // A character cut at the 8 KB mark is not a sign of binary.
            e.error_len().is_some()
        });
    let is_text_mime = mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
        );
    let is_html_mime = mime == "text/html" || mime == "application/xhtml+xml";
    let is_unknown = mime.is_empty() || mime == "application/octet-stream";
    if is_binary || !(is_text_mime || is_unknown) {
        return Kind::Binary;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(256)]).trim_start().to_lowercase();
    let looks_html = start.starts_with("<!doctype html") || start.starts_with("<html");
    if is_html_mime || (is_unknown && looks_html) { Kind::Html } else { Kind::Text }
}

/// The page as the model gets it.
fn render(f: Fetched, requested: &str) -> Result<ToolOutput, ToolError> {
    let kind = kind_of(&f.content_type, &f.body);
    let shown_type = if f.content_type.is_empty() { "no content type" } else { &f.content_type };
    if !f.status.is_success() {
        let snippet = match kind {
            Kind::Binary => String::new(),
            Kind::Html | Kind::Text => {
                let text = String::from_utf8_lossy(&f.body);
                let cut = truncate::head(text.trim(), 20, 1000).text;
                if cut.is_empty() { cut } else { format!("\n{cut}") }
            }
        };
        return Err(ToolError::Model(format!("HTTP {} from {}{snippet}", f.status, f.url)));
    }
    let text = match kind {
        Kind::Binary => {
            return Err(ToolError::Model(format!(
                "{} is binary ({shown_type}, {}); web_fetch only reads text and HTML",
                f.url,
                format_size(f.body.len())
            )));
        }
        Kind::Text => String::from_utf8_lossy(&f.body).into_owned(),
        Kind::Html => {
            let html = String::from_utf8_lossy(&f.body);
            htmd::HtmlToMarkdown::builder()
                .skip_tags(SKIPPED_TAGS.to_vec())
                .build()
                .convert(&html)
                .map_err(|e| {
                    ToolError::Model(format!("cannot convert {} to markdown: {e}", f.url))
                })?
        }
    };
    let shown = truncate::head(&text, usize::MAX, MAX_BYTES);
    let mut out = shown.text.trim_end().to_owned();
    if out.is_empty() {
        out = "(no text content)".to_owned();
    }
    if f.url.as_str() != requested {
        out.push_str(&format!("\n[redirected to {}]", f.url));
    }
    if shown.is_truncated {
        out.push_str(&format!(
            "\n[content truncated: showing the first {} of {}]",
            format_size(shown.text.len()),
            format_size(text.len())
        ));
    }
    if f.is_cut {
        out.push_str(&format!(
            "\n[stopped reading after {}: the page is larger (max_bytes raises the limit)]",
            format_size(f.max_bytes)
        ));
    }
    let details = json!({
        "url": f.url.as_str(),
        "status": f.status.as_u16(),
        "contentType": f.content_type,
        "bytes": f.body.len(),
        "truncated": shown.is_truncated || f.is_cut,
        "markdown": kind == Kind::Html,
    });
    Ok(ToolOutput::text(out).with_details(details))
}

#[cfg(test)]
mod tests;
