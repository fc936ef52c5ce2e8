//! `/login` and `/logout`: API keys stored in auth.json. The key itself is typed into a
//! masked prompt (UI) or read without echo (REPL), never from the command line, so it
//! stays out of the editor history and the session.

use crate::CommandOutcome;
use crate::setup::Setup as Launch;
use rab_config::{Auth, KeySource, resolve_key};

/// Which providers have a key and where it comes from.
pub fn list(launch: &Launch) -> String {
    let auth = Auth::load(&launch.paths.auth_file()).unwrap_or_default();
    let mut out = String::from(
        "API keys (/login PROVIDER stores one, /logout PROVIDER forgets it; \
             `rab login openai --chatgpt` and `rab login openrouter --oauth` sign in through a browser):\n",
    );
    for p in launch.registry.providers().iter().filter(|p| p.requires_key) {
        let from = match resolve_key(p, None, &launch.env, &auth) {
            Some((_, KeySource::Env(var))) => format!("from ${var}"),
            Some((_, KeySource::AuthFile))
                if matches!(
                    auth.credential(&p.name),
                    Some(rab_config::Credential::Oauth { .. })
                ) =>
            {
                format!("ChatGPT sign-in stored in {} (renews itself)", auth.path().display())
            }
            Some((_, KeySource::AuthFile)) => format!("stored in {}", auth.path().display()),
            Some((_, KeySource::Cli)) => "from --api-key".to_owned(),
            Some((_, KeySource::ModelsFile)) => "from models.json".to_owned(),
            None => "none".to_owned(),
        };
        out.push_str(&format!("  {:<14} {from}\n", p.name));
    }
    out
}

/// Checks that `provider` takes a key; the error says which do.
pub fn check_provider(launch: &Launch, provider: &str) -> Result<(), String> {
    check_provider_in(&launch.registry, provider)
}

/// [`check_provider`] against `registry`.
pub fn check_provider_in(registry: &rab_ai::Registry, provider: &str) -> Result<(), String> {
    match registry.provider(provider) {
        Some(p) if p.requires_key => Ok(()),
        Some(_) => Err(format!("{provider} needs no key")),
        None => {
            let names: Vec<&str> = registry
                .providers()
                .iter()
                .filter(|p| p.requires_key)
                .map(|p| p.name.as_str())
                .collect();
            Err(format!("unknown provider {provider}; providers with keys: {}", names.join(", ")))
        }
    }
}

/// Stores `key` for `provider`; the text says where and what it takes to use it.
pub fn store(launch: &Launch, provider: &str, key: &str) -> Result<String, String> {
    store_in(&launch.paths, &launch.registry, provider, key)
}

/// [`store`] without a set-up (an editor signing in before any session).
pub fn store_in(
    paths: &rab_config::Paths,
    registry: &rab_ai::Registry,
    provider: &str,
    key: &str,
) -> Result<String, String> {
    check_provider_in(registry, provider)?;
    let key = key.trim();
    if key.is_empty() {
        return Err("no key entered; nothing stored".into());
    }
    // Checked now, not at the first request: a key an HTTP header cannot carry is a
    // copying mistake (a stray quote or line break), and nothing is stored.
    if let Some((at, c)) = rab_config::invalid_key_char(key) {
        return Err(format!(
            "the key has a character keys never have ({c:?} at position {}); nothing stored",
            at + 1
        ));
    }
    let path = paths.auth_file();
    let mut auth = Auth::load(&path).map_err(|e| e.to_string())?;
    auth.set_key(provider, key).map_err(|e| e.to_string())?;
    Ok(format!(
        "stored the {provider} key in {} (readable only by you); /model picks a {provider} model",
        path.display()
    ))
}

/// `/logout PROVIDER`.
pub fn logout(launch: &Launch, provider: &str) -> CommandOutcome {
    if provider.is_empty() {
        return CommandOutcome::Error("/logout takes a provider; /login lists the keys".into());
    }
    let path = launch.paths.auth_file();
    let removed = Auth::load(&path).and_then(|mut a| a.remove_key(provider));
    match removed {
        Ok(true) => CommandOutcome::Info(format!(
            "forgot the {provider} key in {}; a key in the environment still applies",
            path.display()
        )),
        Ok(false) => {
            CommandOutcome::Info(format!("no {provider} key is stored in {}", path.display()))
        }
        Err(e) => CommandOutcome::Error(e.to_string()),
    }
}
