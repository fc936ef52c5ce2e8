//! `/status` (where rab stands: model, endpoint, key, sandbox, trust, services, context)
//! and `/permissions` (the rules in effect; `/permissions allow|ask|deny RULE` and
//! `/permissions remove RULE` change your own settings file).

use rab_config::{Auth, resolve_key};
use serde_json::Value;

use super::Outcome;
use crate::AgentSession;
use crate::setup::Setup as Launch;

/// `/status`.
pub(super) fn status(launch: &Launch, session: &AgentSession) -> String {
    let config = session.agent().config();
    let model = &config.model;
    let mut out = format!(
        "model: {} ({}), thinking {}\nendpoint: {} ({})\n",
        model.id,
        model.provider,
        session.thinking(),
        model.base_url,
        model.api.as_str()
    );
    let key = match launch.registry.provider(&model.provider) {
        Some(p) if !p.requires_key => "not needed".to_owned(),
        Some(p) if config.options.credential.is_some() => format!("{} sign-in", p.name),
        Some(p) => {
            let auth = Auth::load(&launch.paths.auth_file()).unwrap_or_default();
            let cli = launch.options.model.api_key.as_deref();
            match (config.options.api_key.is_some(), resolve_key(p, cli, &launch.env, &auth)) {
                (true, Some((_, source))) => source.describe(&launch.paths.auth_file()),
                (true, None) => "set".to_owned(),
                (false, _) => format!("none: /login {} stores one", p.name),
            }
        }
        None => "unknown provider".to_owned(),
    };
    out.push_str(&format!("key: {key}\n"));
    let sandbox = launch.workspace.sandbox();
    out.push_str(&format!(
        "sandbox: {} · network {}\n",
        sandbox.mode().as_str(),
        if sandbox.is_network_allowed() { "allowed" } else { "off" }
    ));
    out.push_str(&format!(
        "permission mode: {}\nfolder: {} ({})\n",
        launch.gate.mode().get().as_str(),
        launch.cwd.display(),
        if launch.options.trusted {
            "trusted: its hooks, MCP servers and allow rules apply"
        } else {
            "not trusted: `rab trust` lets its hooks, MCP servers and allow rules apply"
        }
    ));
    let services: Vec<crate::ServiceStatus> =
        launch.extensions.iter().filter_map(|e| e.services()).flat_map(|s| s.statuses()).collect();
    if services.is_empty() {
        out.push_str("MCP servers and plugins: none\n");
    }
    for s in services {
        out.push_str(&format!(
            "{} {}: {} ({} tools)\n",
            s.kind.label(),
            s.name,
            s.state.label(),
            s.tools
        ));
    }
    let used = session.context_tokens();
    let limit = model.input_limit().max(1);
    out.push_str(&format!(
        "context: ~{used} of {limit} tokens ({}%)\nsession: {}",
        used * 100 / limit,
        session.tape().id()
    ));
    out
}

/// `/permissions [allow|ask|deny|remove RULE]`.
pub(super) fn permissions(args: &str, launch: &Launch) -> Outcome {
    let file = launch.paths.settings_file();
    let (verb, rule) = args.split_once(' ').map_or((args, ""), |(v, r)| (v, r.trim()));
    if verb.is_empty() {
        let p = &launch.settings.permissions;
        let list = |name: &str, rules: &[String]| {
            let shown = if rules.is_empty() { "(none)".to_owned() } else { rules.join(", ") };
            format!("{name}: {shown}\n")
        };
        return Outcome::Info(format!(
            "permission mode: {}\n{}{}{}your \"always\" answers: {}\n\
             /permissions allow|ask|deny RULE adds a rule to {}; /permissions remove RULE \
             takes it out (see docs/permissions.md for rules)",
            launch.gate.mode().get().as_str(),
            list("allow", &p.allow),
            list("ask", &p.ask),
            list("deny", &p.deny),
            launch.paths.agent_dir().join("answers.json").display(),
            file.display()
        ));
    }
    if rule.is_empty() {
        return Outcome::Error(format!(
            "/permissions {verb} takes a rule, e.g. /permissions {verb} bash(cargo test:*)"
        ));
    }
    let current: Value = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let rules = |kind: &str| -> Vec<String> {
        current["permissions"][kind]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let changed: Vec<(&str, Vec<String>)> = match verb {
        "allow" | "ask" | "deny" => {
            // Read back as rab will read it at the next start: a rule it cannot read is
            // refused here rather than written where it would stop rab from starting.
            if let Err(why) = launch.gate.check_rule(rule) {
                return Outcome::Error(format!(
                    "{rule} is not a rule rab can use: {why}; nothing was written (see \
                     docs/permissions.md)"
                ));
            }
            let mut list = rules(verb);
            if list.iter().any(|r| r == rule) {
                return Outcome::Info(format!(
                    "{rule} is already a {verb} rule in {}",
                    file.display()
                ));
            }
            list.push(rule.to_owned());
            vec![(verb, list)]
        }
        "remove" => {
            let mut out = Vec::new();
            for kind in ["allow", "ask", "deny"] {
                let list = rules(kind);
                if list.iter().any(|r| r == rule) {
                    out.push((kind, list.into_iter().filter(|r| r != rule).collect()));
                }
            }
            if out.is_empty() {
                return Outcome::Error(format!(
                    "{rule} is not a rule of {} (a project's rules are changed in its file)",
                    file.display()
                ));
            }
            out
        }
        other => {
            return Outcome::Error(format!(
                "/permissions {other}: use allow, ask, deny or remove, e.g. /permissions deny \
                 bash(git push:*)"
            ));
        }
    };
    for (kind, list) in changed {
        let value = Value::from(list);
        if let Err(e) = rab_config::set_setting(&file, &format!("permissions.{kind}"), value) {
            return Outcome::Error(e.to_string());
        }
    }
    let done = if verb == "remove" { "removed" } else { "added" };
    Outcome::Info(format!("{rule}: {done} ({}); /reload applies it now", file.display()))
}
