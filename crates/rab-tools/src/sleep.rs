//! The `sleep` tool: waits a given number of seconds, at most five minutes, so the model
//! can give a background command or an external process time without burning turns on
//! polling. An interrupt ends the wait at once.

use std::time::Duration;

use rab_agent::{ABORTED, Tool, ToolContext, ToolError, ToolLevel, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The longest sleep the model may ask for, in seconds.
pub const MAX_SECS: f64 = 300.0;

/// Waits a while.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sleep;

impl Sleep {
    /// The tool.
    pub fn new() -> Self {
        Self
    }
}

/// Arguments of `sleep`.
#[derive(Deserialize, JsonSchema)]
// Every schema byte is sent on every request; the tool description says it all.
#[schemars(description = "")]
pub struct Args {
    /// Seconds (max 300).
    pub seconds: f64,
}

impl Tool for Sleep {
    type Args = Args;
    const NAME: &'static str = "sleep";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;

    fn description(&self) -> String {
        "Wait the given number of seconds (at most 300), e.g. for a background command to \
         make progress."
            .to_owned()
    }

    async fn run(&self, args: Args, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let secs = args.seconds;
        // `!(0..=MAX).contains` also catches NaN.
        if !(0.0..=MAX_SECS).contains(&secs) {
            return Err(ToolError::Model(format!(
                "seconds must be between 0 and {MAX_SECS}, got {secs}; sleep in several \
                 calls for longer waits"
            )));
        }
        let started = tokio::time::Instant::now();
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs_f64(secs)) => {
                let shown = seconds(secs);
                Ok(ToolOutput::text(format!("slept {shown}s"))
                    .with_details(json!({"seconds": secs})))
            }
            () = cx.cancel.cancelled() => {
                let slept = seconds(started.elapsed().as_secs_f64());
                Err(ToolError::Model(format!("{ABORTED} after {slept}s")))
            }
        }
    }
}

/// `secs` rounded to a tenth, without a trailing `.0`.
fn seconds(secs: f64) -> String {
    let tenths = (secs * 10.0).round() / 10.0;
    format!("{tenths}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rab_agent::AgentTool;
    use serde_json::Value;

    async fn sleep(args: Value) -> Result<ToolOutput, ToolError> {
        Sleep::new().execute(args, ToolContext::detached("c")).await
    }

    #[test]
    fn spec_stays_small() {
        let len = serde_json::to_string(&Sleep::new().spec()).unwrap().len();
        assert!(len < 300, "sleep spec is {len} bytes");
    }

    #[tokio::test(start_paused = true)]
    async fn sleeps_the_given_seconds() {
        let started = tokio::time::Instant::now();
        let out = sleep(json!({"seconds": 2})).await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        assert_eq!(out, ToolOutput::text("slept 2s").with_details(json!({"seconds": 2.0})));
        let out = sleep(json!({"seconds": 0.25})).await.unwrap();
        assert_eq!(out.content, ToolOutput::text("slept 0.3s").content);
    }

    #[tokio::test(start_paused = true)]
    async fn cancel_ends_the_sleep_and_says_how_long_it_lasted() {
        let cx = ToolContext::detached("c");
        let cancel = cx.cancel.clone();
        let call = tokio::spawn(async move { Sleep::new().run(Args { seconds: 300.0 }, cx).await });
        // With time paused, this returns once the clock has been advanced by 3 s.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let before_cancel = tokio::time::Instant::now();
        cancel.cancel();
        let result = call.await.unwrap();
        assert_eq!(before_cancel.elapsed(), Duration::ZERO);
        assert_eq!(result, Err(ToolError::Model(format!("{ABORTED} after 3s"))));
    }

    #[tokio::test]
    async fn more_than_the_limit_or_negative_is_a_model_error() {
        for bad in [301.0, -1.0] {
            let err = sleep(json!({"seconds": bad})).await.unwrap_err();
            assert_eq!(
                err,
                ToolError::Model(format!(
                    "seconds must be between 0 and 300, got {bad}; sleep in several calls for \
                     longer waits"
                ))
            );
        }
    }
}
