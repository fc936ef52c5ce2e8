use std::sync::Mutex;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rab_ai::{Api, Client, RetryPolicy};
use rab_fake_llm::{FakeLlm, Item, Turn};
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::tool::{BoxFuture, Tool, ToolLevel, ToolOutput};

#[derive(Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// Waits at a barrier: two calls only finish if they run at the same time.
struct Rendezvous(Arc<tokio::sync::Barrier>);
impl Tool for Rendezvous {
    type Args = NoArgs;
    const NAME: &'static str = "rendezvous";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "meet".into()
    }
    async fn run(&self, _: NoArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.0.wait().await;
        cx.updates.send("met");
        Ok(ToolOutput::text(format!("met {}", cx.call_id)))
    }
}

/// Records start/end and, when asked, queues steering while it runs.
struct Step {
    log: Arc<Mutex<Vec<String>>>,
    steer: Option<Queues>,
}
impl Tool for Step {
    type Args = NoArgs;
    const NAME: &'static str = "step";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "one step".into()
    }
    fn mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }
    async fn run(&self, _: NoArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.log.lock().unwrap().push(format!("start {}", cx.call_id));
        if let Some(q) = &self.steer {
            q.steer(Message::user("change of plan"));
        }
        tokio::task::yield_now().await;
        self.log.lock().unwrap().push(format!("end {}", cx.call_id));
        Ok(ToolOutput::text("stepped"))
    }
}

/// Runs until cancelled.
struct Forever;
impl Tool for Forever {
    type Args = NoArgs;
    const NAME: &'static str = "forever";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "never ends".into()
    }
    async fn run(&self, _: NoArgs, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        cx.cancel.cancelled().await;
        Err(ToolError::Model("stopped".into()))
    }
}

fn agent(llm: &FakeLlm, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    let mut model = Model::custom("test-model", "anthropic", Api::AnthropicMessages, &llm.url());
    model.max_output = 1024;
    let config = AgentConfig {
        model,
        options: StreamOptions {
            api_key: Some("k".into()),
            retry: RetryPolicy::none(),
            ..Default::default()
        },
        max_turns: None,
        steering_mode: DrainMode::OneAtATime,
        follow_up_mode: DrainMode::OneAtATime,
        spend: None,
    };
    Agent::new(Arc::new(Client::new()), config, "system".into(), tools)
}

#[derive(Default)]
struct Recorder {
    events: Vec<AgentEvent>,
}

impl Recorder {
    fn sink(&mut self) -> impl FnMut(AgentEvent) -> Result<(), String> + Send + '_ {
        |e| {
            self.events.push(e);
            Ok(())
        }
    }

    fn results(&self) -> Vec<(String, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolResult { result, .. } => Some((result.text(), result.is_error)),
                _ => None,
            })
            .collect()
    }
}

fn user_texts(req: &rab_fake_llm::RecordedRequest) -> Vec<String> {
    req.transcript()
        .items
        .into_iter()
        .filter_map(|i| match i {
            Item::User(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn parallel_calls_run_at_the_same_time_and_results_keep_source_order() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("rendezvous", json!({})).and_tool_call("rendezvous", json!({})),
        Turn::text("both met"),
    ]);
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let mut a = agent(&llm, vec![Arc::new(Rendezvous(barrier))]);
    let mut rec = Recorder::default();
    let mut sink = rec.sink();
    let run = a.run(vec![Message::user("go")], &mut sink, CancellationToken::new());
    let stop =
        tokio::time::timeout(Duration::from_secs(10), run).await.expect("calls ran concurrently");
    drop(sink);
    assert_eq!(stop, StopCause::Done);
    assert_eq!(
        rec.results(),
        [("met toolu_1_0".to_owned(), false), ("met toolu_1_1".to_owned(), false)]
    );
    let updates = rec.events.iter().filter(|e| matches!(e, AgentEvent::ToolUpdate { .. })).count();
    assert_eq!(updates, 2);
    let results: Vec<_> = llm.requests()[1].tool_results().into_iter().map(|(id, _)| id).collect();
    assert_eq!(results, ["toolu_1_0", "toolu_1_1"]);
}

#[tokio::test]
async fn sequential_tools_run_one_after_another() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("step", json!({})).and_tool_call("step", json!({})),
        Turn::text("ok"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut a = agent(&llm, vec![Arc::new(Step { log: log.clone(), steer: None })]);
    let mut rec = Recorder::default();
    a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["start toolu_1_0", "end toolu_1_0", "start toolu_1_1", "end toolu_1_1"]
    );
}

#[tokio::test]
async fn steering_skips_the_rest_of_the_batch_and_is_injected_next() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("step", json!({})).and_tool_call("step", json!({})),
        Turn::text("ok, new plan"),
    ]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let queues = Queues::default();
    let step = Step { log: log.clone(), steer: Some(queues.clone()) };
    let mut a = agent(&llm, vec![Arc::new(step)]).with_queues(queues);
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    assert_eq!(rec.results(), [("stepped".to_owned(), false), (SKIPPED_STEERING.to_owned(), true)]);
    assert_eq!(log.lock().unwrap().len(), 2, "only the first call ran");
    let second = &llm.requests()[1];
    assert_eq!(user_texts(second), ["go", "change of plan"]);
    assert_eq!(second.tool_results().len(), 2, "the skipped call still has a result");
}

#[tokio::test]
async fn follow_ups_wait_until_the_agent_would_stop_one_at_a_time_or_all() {
    for (mode, requests) in [(DrainMode::OneAtATime, 3), (DrainMode::All, 2)] {
        let llm = FakeLlm::start();
        llm.script([Turn::text("first"), Turn::text("second"), Turn::text("third")]);
        let mut a = agent(&llm, vec![]);
        a.config_mut().follow_up_mode = mode;
        a.queues().follow_up(Message::user("also this"));
        a.queues().follow_up(Message::user("and that"));
        let mut rec = Recorder::default();
        let stop =
            a.run(vec![Message::user("start")], &mut rec.sink(), CancellationToken::new()).await;
        assert_eq!(stop, StopCause::Done);
        let reqs = llm.requests();
        assert_eq!(reqs.len(), requests, "{mode:?}");
        assert_eq!(
            user_texts(&reqs[0]),
            ["start"],
            "follow-ups are not sent before the agent stops"
        );
        assert_eq!(
            user_texts(reqs.last().unwrap()),
            ["start", "also this", "and that"],
            "{mode:?}"
        );
    }
}

#[tokio::test]
async fn unknown_tools_and_invalid_arguments_become_error_results() {
    let llm = FakeLlm::start();
    let mut bad = Turn::tool_call("step", json!({}));
    bad.tool_calls[0].raw_arguments = Some("{\"x\": ".into());
    llm.script([
        Turn::tool_call("no_such_tool", json!({}))
            .and_tool_call("rendezvous", json!({"unexpected": 1})),
        bad,
        Turn::text("recovered"),
    ]);
    let barrier = Arc::new(tokio::sync::Barrier::new(1));
    let log = Arc::new(Mutex::new(Vec::new()));
    let tools: Vec<Arc<dyn AgentTool>> =
        vec![Arc::new(Rendezvous(barrier)), Arc::new(Step { log, steer: None })];
    let mut a = agent(&llm, tools);
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    let results = rec.results();
    assert_eq!(
        results[0],
        ("unknown tool 'no_such_tool'; available tools: rendezvous, step".to_owned(), true)
    );
    assert_eq!(results[1], ("met toolu_1_1".to_owned(), false), "unknown fields are ignored");
    assert!(results[2].0.starts_with("invalid JSON arguments for step: EOF"), "{}", results[2].0);
    assert!(results[2].1);
}

#[tokio::test]
async fn max_turns_stops_before_the_next_request() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("step", json!({})),
        Turn::tool_call("step", json!({})),
        Turn::text("never"),
    ]);
    let mut a = agent(&llm, vec![Arc::new(Step { log: Default::default(), steer: None })]);
    a.config_mut().max_turns = Some(2);
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::MaxTurns { limit: 2 });
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn cancelling_during_a_tool_gives_every_call_an_aborted_result() {
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("forever", json!({})).and_tool_call("forever", json!({}))]);
    let mut a = agent(&llm, vec![Arc::new(Forever)]);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut sink = move |e: AgentEvent| {
        if matches!(e, AgentEvent::ToolCall { .. }) {
            trigger.cancel();
        }
        Ok(())
    };
    let stop = a.run(vec![Message::user("go")], &mut sink, cancel).await;
    assert_eq!(stop, StopCause::Aborted);
    let results: Vec<_> = a
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.text()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.starts_with(ABORTED)), "{results:?}");
}

#[tokio::test]
async fn a_failing_sink_stops_the_run_before_tools_run() {
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("step", json!({}))]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut a = agent(&llm, vec![Arc::new(Step { log: log.clone(), steer: None })]);
    let mut sink = |e: AgentEvent| match e {
        AgentEvent::MessageEnd { message: Message::Assistant(_) } => Err("disk full".to_owned()),
        _ => Ok(()),
    };
    let stop = a.run(vec![Message::user("go")], &mut sink, CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Error { message: "disk full".into() });
    assert!(log.lock().unwrap().is_empty(), "nothing runs that was not recorded");
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_its_message() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("x").after_fault(400, None)]);
    let mut a = agent(&llm, vec![]);
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    match stop {
        StopCause::Error { message } => assert!(message.contains("HTTP 400"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn steering_drains_one_at_a_time_or_all() {
    for (mode, requests) in [(DrainMode::OneAtATime, 3), (DrainMode::All, 2)] {
        let llm = FakeLlm::start();
        llm.script([Turn::text("a"), Turn::text("b"), Turn::text("c")]);
        let mut a = agent(&llm, vec![]);
        a.config_mut().steering_mode = mode;
        a.queues().steer(Message::user("steer 1"));
        a.queues().steer(Message::user("steer 2"));
        let mut rec = Recorder::default();
        let stop =
            a.run(vec![Message::user("start")], &mut rec.sink(), CancellationToken::new()).await;
        assert_eq!(stop, StopCause::Done);
        let reqs = llm.requests();
        assert_eq!(reqs.len(), requests, "{mode:?}");
        assert_eq!(user_texts(reqs.last().unwrap()), ["start", "steer 1", "steer 2"], "{mode:?}");
    }
}

/// A source whose tool appears when the test says so (an MCP server that finished
/// starting while the agent was working).
#[derive(Default)]
struct LateTools {
    tools: Mutex<Vec<Arc<dyn AgentTool>>>,
    version: std::sync::atomic::AtomicU64,
}

impl ToolSource for LateTools {
    fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools.lock().unwrap().clone()
    }
}

/// Adds the late tool when it runs.
struct Arrive(Arc<LateTools>);
impl Tool for Arrive {
    type Args = NoArgs;
    const NAME: &'static str = "arrive";
    const LEVEL: ToolLevel = ToolLevel::ReadOnly;
    fn description(&self) -> String {
        "makes the late tool appear".into()
    }
    async fn run(&self, _: NoArgs, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let barrier = Arc::new(tokio::sync::Barrier::new(1));
        self.0.tools.lock().unwrap().push(Arc::new(Rendezvous(barrier)));
        self.0.version.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(ToolOutput::text("arrived"))
    }
}

#[tokio::test]
async fn tools_from_a_source_appear_in_the_next_request_of_the_same_run() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("arrive", json!({})),
        Turn::tool_call("rendezvous", json!({})),
        Turn::text("done"),
    ]);
    let late = Arc::new(LateTools::default());
    let mut a = agent(&llm, vec![Arc::new(Arrive(late.clone()))]);
    a.add_tool_source(late.clone());
    assert_eq!(a.tool_specs().len(), 1);
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    let names = |i: usize| -> Vec<String> {
        llm.requests()[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(0), ["arrive"]);
    assert_eq!(names(1), ["arrive", "rendezvous"]);
    assert_eq!(rec.results()[1], ("met toolu_2_0".to_owned(), false));
}

#[tokio::test]
async fn issue_13_tools_that_arrive_go_in_a_system_message_and_the_declared_ones_stay() {
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("arrive", json!({})),
        Turn::tool_call("rendezvous", json!({})),
        Turn::text("done"),
    ]);
    let late = Arc::new(LateTools::default());
    let mut a = agent(&llm, vec![Arc::new(Arrive(late.clone()))]);
    a.config_mut().model.compat.system_messages = true;
    a.config_mut().model.compat.tool_changes = true;
    a.add_tool_source(late.clone());
    let mut rec = Recorder::default();
    let stop = a.run(vec![Message::user("go")], &mut rec.sink(), CancellationToken::new()).await;
    assert_eq!(stop, StopCause::Done);
    let tools = |i: usize| llm.requests()[i].body["tools"].clone();
    assert_eq!(tools(0).as_array().unwrap().len(), 1);
    assert_eq!(tools(1)[0], tools(0)[0], "the declared tool is sent as it was");
    assert_eq!(tools(1)[1]["name"], "rendezvous");
    assert_eq!(tools(1)[1]["defer_loading"], true);
    let updates: Vec<&rab_ai::SystemMessage> = rec
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: Message::System(s) } => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 1, "recorded once, before the request that carries it");
    assert_eq!(updates[0].tools_added[0].name, "rendezvous");
    assert_eq!(a.declared_tools().unwrap().len(), 1);
    // The system message sits after the tool result, before the next reply.
    let kinds: Vec<&str> = a
        .messages()
        .iter()
        .map(|m| match m {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "result",
            Message::System(_) => "system",
        })
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "result", "system", "assistant", "result", "assistant"]
    );
}

#[tokio::test]
async fn issue_13_a_changed_thinking_level_is_recorded_before_the_next_prompt() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("one"), Turn::text("two")]);
    let mut a = agent(&llm, vec![]);
    let mut rec = Recorder::default();
    a.run(vec![Message::user("a")], &mut rec.sink(), CancellationToken::new()).await;
    a.config_mut().options.thinking = rab_ai::ThinkingLevel::High;
    a.run(vec![Message::user("b")], &mut rec.sink(), CancellationToken::new()).await;
    let change = a.messages().iter().find_map(|m| match m {
        Message::System(s) => s.thinking,
        _ => None,
    });
    assert_eq!(change, Some((rab_ai::ThinkingLevel::Off, rab_ai::ThinkingLevel::High)));
    assert!(matches!(a.messages()[2], Message::System(_)), "before the prompt it applies to");
}

#[tokio::test]
async fn issue_13_the_budget_prices_a_large_prompt_at_its_tier() {
    let llm = FakeLlm::start();
    llm.script([Turn::text("never")]);
    let mut a = agent(&llm, vec![]);
    a.config_mut().model.cost.input = 1.0;
    a.config_mut().model.cost.tiers = vec![rab_ai::PriceTier {
        above: 1_000,
        rates: rab_ai::Rates { input: 1_000.0, output: 1_000.0, ..Default::default() },
    }];
    a.config_mut().spend = Some(crate::Spend::new(crate::Ledger::new(Some(0.5))));
    // About 2,500 tokens: a few cents at the base rate, dollars at the tier's.
    let mut rec = Recorder::default();
    let stop = a
        .run(vec![Message::user("x".repeat(10_000))], &mut rec.sink(), CancellationToken::new())
        .await;
    assert!(matches!(stop, StopCause::Budget { .. }), "{stop:?}");
    assert!(llm.requests().is_empty());
}

/// Drops every tool result (so its call is left unanswered) or, when `inject`, puts a
/// note before the last message.
struct Transform {
    inject: bool,
}
impl ContextTransform for Transform {
    fn transform<'a>(
        &'a self,
        messages: &'a [Message],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Message>>> {
        Box::pin(async move {
            let mut out = messages.to_vec();
            if self.inject {
                out.insert(0, Message::user("NOTE from memory: the user likes tabs"));
            } else {
                out.retain(|m| !matches!(m, Message::ToolResult(_)));
            }
            Some(out)
        })
    }
}

#[tokio::test]
async fn context_transforms_change_each_request_not_the_history_and_unsendable_ones_are_passed_over()
 {
    let llm = FakeLlm::start();
    llm.script([Turn::tool_call("step", json!({})), Turn::text("done")]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut a = agent(&llm, vec![Arc::new(Step { log, steer: None })]);
    a.add_transform(Arc::new(Transform { inject: true }));
    a.add_transform(Arc::new(Transform { inject: false }));
    let mut rec = Recorder::default();
    let mut sink = rec.sink();
    let stop = a.run(vec![Message::user("go")], &mut sink, CancellationToken::new()).await;
    drop(sink);
    assert_eq!(stop, StopCause::Done);
    let reqs = llm.requests();
    assert!(reqs.iter().all(|r| r.status == 200), "the dropping transform was passed over");
    for r in &reqs {
        assert_eq!(user_texts(r)[0], "NOTE from memory: the user likes tabs");
    }
    assert_eq!(reqs[1].tool_results().len(), 1);
    assert_eq!(a.messages().len(), 4, "the history has no note: prompt, call, result, answer");
    assert!(crate::hooks::unsendable(a.messages()).is_none());
    let mut orphan = a.messages()[..2].to_vec();
    assert!(crate::hooks::unsendable(&orphan).unwrap().contains("has no result"));
    orphan.remove(1);
    orphan.push(a.messages()[2].clone());
    assert!(crate::hooks::unsendable(&orphan).unwrap().contains("has no call before it"));
    assert!(crate::hooks::unsendable(&[]).is_some());
}
