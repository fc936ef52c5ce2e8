//! How an editor signs in (`authMethods`, `authenticate`) and which commands it can
//! offer (`available_commands_update`).

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, AuthenticateRequest, AvailableCommand,
    AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate, UnstructuredCommandInput,
};
use rab_config::{Env, Paths};
use rab_core::setup::Setup;

/// The `authenticate` method whose key the editor passes (`_meta.apiKey`), by provider.
const API_KEY_METHOD: &str = "api-key-";
/// The `rab login PROVIDER` method the editor runs in a terminal, by provider.
const LOGIN_METHOD: &str = "login-";

/// Ways an editor can give rab a key, for each provider that needs one: `rab login
/// PROVIDER` run in a terminal (the key read without echo), or the key entered in the
/// editor and passed to `authenticate` (`_meta.apiKey`); and the browser sign-ins of
/// `rab login openai --oauth` (a ChatGPT plan) and `rab login openrouter --oauth`.
pub(super) fn auth_methods(env: &Env, paths: &Paths) -> Vec<AuthMethod> {
    let Ok(registry) = rab_core::setup::target::registry(env, paths) else { return Vec::new() };
    let mut methods = Vec::new();
    for p in registry.providers().iter().filter(|p| p.requires_key) {
        let name = &p.name;
        methods.push(AuthMethod::Terminal(
            AuthMethodTerminal::new(format!("{LOGIN_METHOD}{name}"), format!("{name} API key"))
                .description(format!(
                    "Store a {name} key for rab (read from the terminal, never echoed)"
                ))
                .args(vec!["login".to_owned(), name.clone()]),
        ));
        methods.push(AuthMethod::Agent(
            AuthMethodAgent::new(
                format!("{API_KEY_METHOD}{name}"),
                format!("Enter a {name} API key"),
            )
            .description(
                "The editor passes the key to rab's authenticate as _meta.apiKey; rab stores \
                 it in auth.json, readable only by you",
            ),
        ));
    }
    let sign_ins = [
        ("openai", "Sign in with ChatGPT", "Use your ChatGPT plan (a browser sign-in)"),
        ("openrouter", "Sign in to OpenRouter", "Get an OpenRouter key (a browser sign-in)"),
    ];
    for (provider, name, description) in sign_ins {
        if registry.provider(provider).is_some() {
            methods.push(AuthMethod::Terminal(
                AuthMethodTerminal::new(format!("oauth-{provider}"), name)
                    .description(description)
                    .args(vec!["login".to_owned(), provider.to_owned(), "--oauth".to_owned()]),
            ));
        }
    }
    methods
}

/// `authenticate`: an `api-key-PROVIDER` method stores the key the editor passed, as
/// `/login` does; a terminal method (which an editor runs rather than passes) is checked:
/// the provider has a key now, or the error says how to give one.
pub(super) fn authenticate(
    env: &Env,
    paths: &Paths,
    req: &AuthenticateRequest,
) -> Result<(), Error> {
    let registry = rab_core::setup::target::registry(env, paths)
        .map_err(|e| Error::internal_error().data(e.message))?;
    let method = req.method_id.0.to_string();
    if let Some(provider) = method.strip_prefix(API_KEY_METHOD) {
        let key = req
            .meta
            .as_ref()
            .and_then(|m| m.get("apiKey"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| {
                Error::invalid_params()
                    .data(format!("{method} takes the key in the request's _meta.apiKey"))
            })?;
        return rab_core::commands::login::store_in(paths, &registry, provider, key)
            .map(|_| ())
            .map_err(|e| Error::invalid_params().data(e));
    }
    let provider = method
        .strip_prefix(LOGIN_METHOD)
        .or_else(|| method.strip_prefix("oauth-"))
        .filter(|p| registry.provider(p).is_some())
        .ok_or_else(|| {
            Error::invalid_params().data(format!("unknown authentication method {method}"))
        })?;
    let auth = rab_config::Auth::load(&paths.auth_file()).unwrap_or_default();
    let has_key = registry
        .provider(provider)
        .is_some_and(|p| rab_config::resolve_key(p, None, env, &auth).is_some());
    if has_key {
        Ok(())
    } else {
        Err(Error::auth_required()
            .data(format!("no {provider} key yet: run `rab login {provider}` in a terminal")))
    }
}

/// The session's commands as ACP's available commands (`/name` in the editor's prompt).
pub(super) fn available_commands(setup: &Setup) -> SessionUpdate {
    let commands = setup
        .extensions
        .commands()
        .into_iter()
        .map(|c| {
            let command = AvailableCommand::new(c.name, c.description);
            match c.argument_hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
                None => command,
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}
