//! `rab update`: how to update this rab for the way it was installed, and whether a
//! newer release is out.
//!
//! The latest release is asked of GitHub's REST API, `GET /repos/{owner}/{repo}/releases/latest`,
//! whose answer names the release's tag in `tag_name` (docs.github.com/en/rest/releases/releases,
//! "Get the latest release", API version 2022-11-28, read 2026-12-07). `RAB_UPDATE_URL`
//! asks another address (a mirror; tests use a loopback server); `RAB_UPDATE_URL=off`
//! skips the check. Without network the check says so and the advice stands.

use std::time::Duration;

use crate::{EXIT_OK, Env};

/// Where the latest release is asked.
const LATEST_URL: &str = "https://api.github.com/repos/rab-agent/rab/releases/latest";

/// How long the check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// `rab update`: the advice, then what the latest release is.
pub(crate) fn command(env: &Env) -> u8 {
    outln!("{}", advice(std::env::current_exe().ok().as_deref(), env));
    let url = env.get("RAB_UPDATE_URL").unwrap_or(LATEST_URL);
    if url == "off" {
        return EXIT_OK;
    }
    let line = match latest(url) {
        Ok(tag) => compare(env!("CARGO_PKG_VERSION"), &tag),
        Err(why) => format!("Could not check for a newer release: {why}"),
    };
    outln!("{line}");
    EXIT_OK
}

/// What the latest release `tag` means for this `version`.
fn compare(version: &str, tag: &str) -> String {
    let latest = tag.trim_start_matches('v');
    // A release is newer than its pre-releases (`0.2.0` after `0.2.0-rc1`).
    let rank = |v: &str| numbers(v).map(|n| (n, !v.contains('-')));
    match (rank(version), rank(latest)) {
        (Some(have), Some(out)) if out > have => {
            format!("A newer release is out: {latest} (this is {version}).")
        }
        (Some(_), Some(_)) => format!("This is the latest release ({latest})."),
        _ => format!("The latest release is {latest} (this is {version})."),
    }
}

/// `1.2.3` as numbers (a pre-release suffix ignored); `None` when it is not a version.
fn numbers(version: &str) -> Option<Vec<u64>> {
    let core = version.split(['-', '+']).next()?;
    core.split('.').map(|n| n.parse().ok()).collect()
}

/// The latest release's tag, from `url`'s JSON answer.
fn latest(url: &str) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let client = rab_ai::http_client_builder().and_then(|b| {
        b.timeout(CHECK_TIMEOUT).connect_timeout(CHECK_TIMEOUT).build().map_err(|e| e.to_string())
    })?;
    rt.block_on(async {
        let response = client
            .get(url)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .header("User-Agent", concat!("rab/", env!("CARGO_PKG_VERSION")))
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    format!("no answer from {url} in {} s", CHECK_TIMEOUT.as_secs())
                } else {
                    let why = crate::doctor::innermost_cause(&e);
                    format!("{url}: {why}")
                }
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{url} answered HTTP {}", status.as_u16()));
        }
        let body: serde_json::Value =
            response.json().await.map_err(|e| format!("{url} did not answer JSON ({e})"))?;
        let tag = body.get("tag_name").and_then(serde_json::Value::as_str).unwrap_or_default();
        // Printed to a terminal: only what a version can hold.
        let is_version = !tag.is_empty()
            && tag.len() <= 64
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
        if is_version {
            Ok(tag.to_owned())
        } else {
            Err(format!("{url} named no release (no usable tag_name)"))
        }
    })
}

/// How to update the rab at `exe`, for the way it was installed (Homebrew, the shell
/// installer or cargo, a build from source).
pub(crate) fn advice(exe: Option<&std::path::Path>, env: &Env) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let path = exe.map(|p| p.display().to_string()).unwrap_or_default();
    let installer = "curl --proto '=https' --tlsv1.2 -LsSf \
                     https://github.com/rab-agent/rab/releases/latest/download/rab-installer.sh | sh";
    let how = if path.contains("/Cellar/")
        || path.contains("/homebrew/")
        || path.contains("/linuxbrew/")
    {
        "brew upgrade rab".to_owned()
    } else if path.contains("/target/release/") || path.contains("/target/debug/") {
        "a build from source: git pull, then cargo build --release (or cargo install --path \
         crates/rab)"
            .to_owned()
    } else {
        let cargo_bin = env.get("CARGO_HOME").map_or_else(
            || env.get("HOME").map(|h| format!("{h}/.cargo/bin")).unwrap_or_default(),
            |c| format!("{c}/bin"),
        );
        if !cargo_bin.is_empty() && path.starts_with(&cargo_bin) {
            format!(
                "run the installer again: {installer}\n  (or: cargo binstall --git https://github.com/rab-agent/rab rab)"
            )
        } else {
            format!(
                "run the installer again (RAB_INSTALL_DIR=DIR for where it is now): {installer}"
            )
        }
    };
    format!(
        "rab {version} ({path})\nTo update: {how}\nReleases and what changed: \
         https://github.com/rab-agent/rab/releases"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_release_is_told_and_an_equal_or_older_one_is_not() {
        assert!(compare("0.1.0", "v0.2.0").starts_with("A newer release is out: 0.2.0"));
        assert!(compare("0.1.0", "v0.1.10").starts_with("A newer release"));
        assert!(compare("0.10.0", "v0.9.9").starts_with("This is the latest"));
        assert!(compare("0.1.0", "0.1.0").starts_with("This is the latest"));
        assert!(compare("0.1.0-rc1", "v0.1.0").starts_with("A newer release"));
        assert!(compare("0.1.0", "v0.1.0-rc2").starts_with("This is the latest"));
        assert!(compare("0.1.0", "nightly").starts_with("The latest release is nightly"));
    }
}
