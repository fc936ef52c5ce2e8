//! The command line. This contract is fixed: scripts and later features rely on it.

use clap::Parser;

/// rab: a fast, light, safe terminal coding agent.
#[derive(Debug, Parser)]
#[command(name = "rab", version, about, long_about = None)]
#[command(
    after_help = "Examples:\n  rab -p \"explain src/main.rs\"\n  git diff | rab -p \"review this\"\n  rab -p --provider ollama --model qwen3-coder \"hi\""
)]
pub struct Cli {
    /// The prompt (words are joined with spaces). Text piped on stdin is prepended.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,

    /// Print mode: answer once and exit (the default when stdin or stdout is not a terminal).
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Provider: anthropic, openai, google, openrouter, deepseek, groq, xai, mistral,
    /// ollama, llamacpp, lmstudio, vllm, opencode, or one from models.json.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// Model id, or provider/model. A bare name is matched by prefix.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// Wire format, overriding the provider's.
    #[arg(long, value_name = "API", value_parser = ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"])]
    pub api: Option<String>,

    /// Endpoint root: for Anthropic and Gemini the host (rab appends /v1/messages or
    /// /v1beta/…); for OpenAI-style APIs the base including /v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// API key, overriding the environment and auth.json.
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Extended thinking level.
    #[arg(long, value_name = "LEVEL", value_parser = ["off", "minimal", "low", "medium", "high"])]
    pub thinking: Option<String>,

    /// Send no tools: chat only.
    #[arg(long)]
    pub no_tools: bool,

    /// List known models (optionally those matching SEARCH) and exit.
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,

    /// Show thinking and retries on stderr.
    #[arg(long)]
    pub verbose: bool,
}
