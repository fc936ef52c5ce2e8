#![deny(missing_docs)]

//! rab-config: where rab keeps its files and what the environment says.
//!
//! It owns the `RAB_HOME` layout ([`Paths`]), the environment snapshot every other
//! part reads instead of the process environment ([`Env`]), credentials
//! (`agent/auth.json`, [`Auth`]) and user model definitions (`models.json`, applied to
//! a [`rab_ai::Registry`]). It must not read the process environment anywhere but
//! [`Env::from_process`].
//!
//! ```
//! use rab_config::{Env, Paths};
//! let env = Env::from_pairs([("RAB_HOME", "/tmp/rab-home")]);
//! let paths = Paths::from_env(&env).unwrap();
//! assert_eq!(paths.auth_file(), std::path::Path::new("/tmp/rab-home/agent/auth.json"));
//! ```

mod answers;
mod auth;
mod checkpoint_settings;
mod env;
mod error;
mod models;
mod paths;
mod profiles;
mod safety;
mod setting_check;
mod setting_types;
mod settings;
mod trust;
pub mod untrusted;

pub use answers::{add_answer, answers_layer};
pub use auth::{Auth, Credential, KeySource, invalid_key_char, resolve_key};
pub use checkpoint_settings::CheckpointSettings;
pub use env::Env;
pub use error::Error;
pub use models::{apply_env_base_urls, load_models_file};
pub use paths::Paths;
pub use safety::{
    HookCommand, HookGroup, HookSettings, PermissionSettings, SafetyLayer, SandboxSettings, Scope,
    SecretSettings, add_allow_rule, set_setting,
};
pub use setting_check::hint as did_you_mean;
pub use settings::{
    ChannelSettings, CompactionSettings, CompactionStrategy, LoadedSettings, LoopSettings,
    QueueMode, RetrySettings, Settings, TelegramSettings, TimeoutSettings, claude_settings_file,
    load_settings, load_settings_with_profile,
};
pub use trust::{TrustStore, canonical_dir};
