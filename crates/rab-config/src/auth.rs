//! Credentials: `agent/auth.json` (`{"anthropic": {"type": "api_key", "key": "…"}}`),
//! and the order in which a provider's key is looked up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rab_ai::ProviderDef;
use serde::{Deserialize, Serialize};

use crate::error::read_optional;
use crate::{Env, Error};

/// One stored credential.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Credential {
    /// A plain API key.
    ApiKey {
        /// The key.
        key: String,
    },
    /// A subscription sign-in (OAuth): an access token that expires and the token
    /// that renews it (replaced on each renewal).
    Oauth {
        /// The access token, sent as the key.
        access: String,
        /// The refresh token.
        refresh: String,
        /// When the access token expires, in milliseconds since the epoch.
        expires_at: u64,
        /// The client id the provider issued to this installation.
        client_id: String,
        /// The token endpoint that renews it.
        #[serde(default)]
        token_url: String,
        /// This installation's id at the provider (kept for later sign-ins).
        #[serde(default)]
        host_id: String,
    },
}

/// The contents of auth.json.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Auth {
    path: PathBuf,
    entries: BTreeMap<String, Credential>,
}

impl Auth {
    /// Loads auth.json; a missing file is an empty store. Warns (through tracing) when
    /// the file is readable by others.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let Some(text) = read_optional(path)? else {
            return Ok(Self { path: path.to_owned(), entries: BTreeMap::new() });
        };
        warn_if_exposed(path);
        let entries = serde_json::from_str(&text).map_err(|e| Error::parse(path, &e))?;
        Ok(Self { path: path.to_owned(), entries })
    }

    /// The stored key for a provider.
    pub fn key(&self, provider: &str) -> Option<&str> {
        match self.entries.get(provider)? {
            Credential::ApiKey { key } => Some(key.as_str()).filter(|k| !k.is_empty()),
            Credential::Oauth { access, .. } => Some(access.as_str()).filter(|k| !k.is_empty()),
        }
    }

    /// A provider's stored credential.
    pub fn credential(&self, provider: &str) -> Option<&Credential> {
        self.entries.get(provider)
    }

    /// Stores a credential for `provider` and writes the file (atomically, readable
    /// only by its owner).
    pub fn set(&mut self, provider: &str, credential: Credential) -> Result<(), Error> {
        self.entries.insert(provider.to_owned(), credential);
        self.save()
    }

    /// Every stored secret, by provider (for the secret firewall and env scrubbing):
    /// keys, and a sign-in's access and refresh tokens.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().flat_map(|(p, c)| match c {
            Credential::ApiKey { key } => vec![(p.as_str(), key.as_str())],
            Credential::Oauth { access, refresh, .. } => {
                vec![(p.as_str(), access.as_str()), (p.as_str(), refresh.as_str())]
            }
        })
    }

    /// The file this store belongs to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores `key` for `provider` and writes the file (atomically, readable only by
    /// its owner).
    pub fn set_key(&mut self, provider: &str, key: &str) -> Result<(), Error> {
        self.entries.insert(provider.to_owned(), Credential::ApiKey { key: key.to_owned() });
        self.save()
    }

    /// Forgets `provider`'s key and writes the file; `false` when there was none.
    pub fn remove_key(&mut self, provider: &str) -> Result<bool, Error> {
        if self.entries.remove(provider).is_none() {
            return Ok(false);
        }
        self.save().map(|()| true)
    }

    fn save(&self) -> Result<(), Error> {
        let io = |source| Error::Io { path: self.path.clone(), source };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let text = serde_json::to_string_pretty(&self.entries).unwrap_or_default();
        let tmp = dir.join(format!(".auth.{}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&tmp).and_then(|mut f| {
            std::io::Write::write_all(&mut f, format!("{text}\n").as_bytes())?;
            f.sync_all()
        });
        written.and_then(|()| std::fs::rename(&tmp, &self.path)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}

#[cfg(unix)]
fn warn_if_exposed(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(path = %path.display(), "auth.json is readable by other users; run chmod 600");
    }
}

#[cfg(not(unix))]
fn warn_if_exposed(_path: &Path) {}

/// Where a key was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// `--api-key`.
    Cli,
    /// An environment variable.
    Env(String),
    /// auth.json.
    AuthFile,
    /// models.json (`apiKey`, literal or the name of a variable).
    ModelsFile,
}

/// Looks up a provider's key: `--api-key` > environment > auth.json > models.json.
/// Surrounding whitespace is dropped (a key read with `$(cat file)` ends in a
/// newline); a value that is only whitespace counts as not set.
pub fn resolve_key(
    provider: &ProviderDef,
    cli: Option<&str>,
    env: &Env,
    auth: &Auth,
) -> Option<(String, KeySource)> {
    let clean = |k: &str| Some(k.trim()).filter(|k| !k.is_empty()).map(str::to_owned);
    if let Some(k) = cli.and_then(clean) {
        return Some((k, KeySource::Cli));
    }
    for name in &provider.key_env {
        if let Some(v) = env.get(name).and_then(clean) {
            return Some((v, KeySource::Env(name.clone())));
        }
    }
    if let Some(k) = auth.key(&provider.name).and_then(clean) {
        return Some((k, KeySource::AuthFile));
    }
    let configured = provider.api_key.as_deref()?;
    // pi's convention: the value names an environment variable when one is set.
    let value = env.get(configured).unwrap_or(configured);
    clean(value).map(|k| (k, KeySource::ModelsFile))
}

impl KeySource {
    /// Where the key came from, for messages: `--api-key`, `$ANTHROPIC_API_KEY`, …
    pub fn describe(&self, auth_file: &Path) -> String {
        match self {
            KeySource::Cli => "--api-key".to_owned(),
            KeySource::Env(var) => format!("${var}"),
            KeySource::AuthFile => auth_file.display().to_string(),
            KeySource::ModelsFile => "apiKey in models.json".to_owned(),
        }
    }
}

/// Why a key cannot be sent: the first character an HTTP header cannot carry
/// (control characters, and anything outside visible ASCII), with its position.
pub fn invalid_key_char(key: &str) -> Option<(usize, char)> {
    key.chars().enumerate().find(|(_, c)| !(c.is_ascii_graphic() || *c == ' '))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn provider() -> ProviderDef {
        let mut p = rab_ai::custom_provider("http://x", None);
        p.name = "anthropic".into();
        p.key_env = vec!["ANTHROPIC_API_KEY".into()];
        p
    }

    #[test]
    fn issue_13_keys_lose_surrounding_whitespace_and_blank_ones_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let auth = Auth::load(&dir.path().join("auth.json")).unwrap();
        let env = Env::from_pairs([("ANTHROPIC_API_KEY", "sk-ant-1\n")]);
        let got = resolve_key(&provider(), None, &env, &auth);
        assert_eq!(got, Some(("sk-ant-1".to_owned(), KeySource::Env("ANTHROPIC_API_KEY".into()))));
        let got = resolve_key(&provider(), Some("  \n"), &env, &auth);
        assert_eq!(got.map(|(_, s)| s), Some(KeySource::Env("ANTHROPIC_API_KEY".into())));
        let blank = Env::from_pairs([("ANTHROPIC_API_KEY", " ")]);
        assert_eq!(resolve_key(&provider(), None, &blank, &auth), None);
        assert_eq!(invalid_key_char("sk-a\u{201c}b"), Some((4, '\u{201c}')));
        assert_eq!(invalid_key_char("sk-ab\tc"), Some((5, '\t')));
        assert_eq!(invalid_key_char("sk-ant-api03-AbC_d"), None);
    }

    #[test]
    fn keys_are_stored_privately_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent/auth.json");
        let mut auth = Auth::load(&path).unwrap();
        auth.set_key("openai", "sk-one").unwrap();
        auth.set_key("anthropic", "sk-two").unwrap();
        let again = Auth::load(&path).unwrap();
        assert_eq!(again.key("openai"), Some("sk-one"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let mut again = again;
        assert!(again.remove_key("openai").unwrap());
        assert!(!again.remove_key("openai").unwrap());
        let last = Auth::load(&path).unwrap();
        assert_eq!(last.key("openai"), None);
        assert_eq!(last.key("anthropic"), Some("sk-two"));
    }

    #[test]
    fn cli_beats_env_beats_auth_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        std::fs::write(&path, r#"{"anthropic": {"type": "api_key", "key": "from-file"}}"#).unwrap();
        let auth = Auth::load(&path).unwrap();
        let env = Env::from_pairs([("ANTHROPIC_API_KEY", "from-env")]);
        let p = provider();
        assert_eq!(resolve_key(&p, Some("cli"), &env, &auth).unwrap().1, KeySource::Cli);
        assert_eq!(
            resolve_key(&p, None, &env, &auth).unwrap(),
            ("from-env".into(), KeySource::Env("ANTHROPIC_API_KEY".into()))
        );
        assert_eq!(
            resolve_key(&p, None, &Env::default(), &auth).unwrap(),
            ("from-file".into(), KeySource::AuthFile)
        );
    }

    #[test]
    fn models_file_key_may_name_a_variable() {
        let mut p = provider();
        p.key_env.clear();
        p.api_key = Some("MY_PROXY_KEY".into());
        let auth = Auth::default();
        let env = Env::from_pairs([("MY_PROXY_KEY", "secret")]);
        assert_eq!(resolve_key(&p, None, &env, &auth).unwrap().0, "secret");
        assert_eq!(resolve_key(&p, None, &Env::default(), &auth).unwrap().0, "MY_PROXY_KEY");
    }

    #[test]
    fn malformed_auth_file_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        std::fs::write(&path, "{\n  \"anthropic\": {\"type\": \"api_key\", \"key\": }\n}").unwrap();
        let err = Auth::load(&path).unwrap_err().to_string();
        assert!(err.contains("auth.json:2:"), "{err}");
    }
}
