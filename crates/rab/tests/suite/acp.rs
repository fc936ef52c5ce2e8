//! `rab acp` driven as an editor drives it, against the fake model: with the protocol
//! crate's client side over the real binary's pipes (a prompt streaming a tool call
//! with its diff, the permission answered, cancel, loading the session again), and
//! with a hand-written JSON-RPC transcript (a question refused, bad requests).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, CreateTerminalRequest, CreateTerminalResponse,
    FileSystemCapabilities, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest,
    ReleaseTerminalResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, StopReason,
    TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, v1};
use rab_fake_llm::{FakeLlm, Turn};
use serde_json::{Value, json};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::harness::{Home, Piped};

const T: Duration = Duration::from_secs(20);

/// What the editor saw.
#[derive(Default)]
struct Seen {
    updates: Vec<Value>,
    questions: Vec<Value>,
    /// The editor's buffers, by path, when it offers its files (reads come from here,
    /// writes go here).
    buffers: std::collections::HashMap<String, String>,
    /// Commands run in the editor's terminal, with their output.
    terminals: Vec<(String, String)>,
}

/// Runs `rab --mode acp` in `cwd` and `talk` as the editor over its pipes, answering
/// every permission question with the option `answer`.
fn editor<F>(
    home: &Home,
    llm: &FakeLlm,
    cwd: &Path,
    answer: &'static str,
    talk: F,
) -> Arc<Mutex<Seen>>
where
    F: AsyncFnOnce(v1::ConnectionTo<Agent>, Arc<Mutex<Seen>>) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    editor_with(home, llm, cwd, &[], answer, talk)
}

/// [`editor`] with more options for rab.
fn editor_with<F>(
    home: &Home,
    llm: &FakeLlm,
    cwd: &Path,
    args: &[&str],
    answer: &'static str,
    talk: F,
) -> Arc<Mutex<Seen>>
where
    F: AsyncFnOnce(v1::ConnectionTo<Agent>, Arc<Mutex<Seen>>) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    let mut cmd = home.rab_for("anthropic-messages", llm, Some("k"));
    cmd.current_dir(cwd).args(["--mode", "acp"]).args(args);
    editor_cmd(cmd, answer, talk)
}

/// [`editor`] running `cmd` (rab with its arguments, as an editor's settings give them).
fn editor_cmd<F>(cmd: std::process::Command, answer: &'static str, talk: F) -> Arc<Mutex<Seen>>
where
    F: AsyncFnOnce(v1::ConnectionTo<Agent>, Arc<Mutex<Seen>>) -> agent_client_protocol::Result<()>
        + Send
        + 'static,
{
    let mut cmd: tokio::process::Command = cmd.into();
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).kill_on_drop(true);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let s = seen.clone();
    rt.block_on(async move {
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let (s1, s2, s3, s4, s5, s6, s7) =
            (s.clone(), s.clone(), s.clone(), s.clone(), s.clone(), s.clone(), s);
        let talked = tokio::time::timeout(
            T,
            Client
                .v1()
                .on_receive_notification(
                    async move |n: SessionNotification, _cx| {
                        s1.lock().unwrap().updates.push(serde_json::to_value(&n.update).unwrap());
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |q: RequestPermissionRequest, responder, _cx| {
                        s2.lock().unwrap().questions.push(serde_json::to_value(&q).unwrap());
                        let option = q.options.iter().find(|o| &*o.option_id.0 == answer);
                        responder.respond(RequestPermissionResponse::new(match option {
                            Some(o) => RequestPermissionOutcome::Selected(
                                SelectedPermissionOutcome::new(o.option_id.clone()),
                            ),
                            None => RequestPermissionOutcome::Cancelled,
                        }))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |r: ReadTextFileRequest, responder, _cx| {
                        let path = r.path.display().to_string();
                        match s4.lock().unwrap().buffers.get(&path).cloned() {
                            Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                            None => responder.respond_with_error(
                                agent_client_protocol::Error::invalid_params().data("no buffer"),
                            ),
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |w: WriteTextFileRequest, responder, _cx| {
                        let path = w.path.display().to_string();
                        s5.lock().unwrap().buffers.insert(path, w.content);
                        responder.respond(WriteTextFileResponse::new())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                // A terminal that runs the command at once and keeps its output.
                .on_receive_request(
                    async move |t: CreateTerminalRequest, responder, _cx| {
                        let out = std::process::Command::new(&t.command)
                            .args(&t.args)
                            .current_dir(t.cwd.clone().unwrap())
                            .output()
                            .unwrap();
                        let text = String::from_utf8_lossy(&out.stdout).into_owned();
                        let mut seen = s6.lock().unwrap();
                        seen.terminals.push((t.args.join(" "), text));
                        responder.respond(CreateTerminalResponse::new(format!(
                            "t{}",
                            seen.terminals.len()
                        )))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |_: WaitForTerminalExitRequest, responder, _cx| {
                        responder.respond(WaitForTerminalExitResponse::new(
                            TerminalExitStatus::new().exit_code(0),
                        ))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |t: TerminalOutputRequest, responder, _cx| {
                        let n: usize = t.terminal_id.0[1..].parse().unwrap();
                        let text = s3.lock().unwrap().terminals[n - 1].1.clone();
                        responder.respond(TerminalOutputResponse::new(text, false))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |_: ReleaseTerminalRequest, responder, _cx| {
                        responder.respond(ReleaseTerminalResponse::new())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(transport, async move |cx: v1::ConnectionTo<Agent>| {
                    talk(cx, s7).await
                }),
        )
        .await;
        talked.expect("the editor's talk timed out").expect("the editor's talk failed");
        drop(child.stdin.take());
        let _ = tokio::time::timeout(T, child.wait()).await;
    });
    seen
}

async fn init(cx: &v1::ConnectionTo<Agent>) -> agent_client_protocol::Result<Value> {
    init_with(cx, ClientCapabilities::new()).await
}

async fn init_with(
    cx: &v1::ConnectionTo<Agent>,
    caps: ClientCapabilities,
) -> agent_client_protocol::Result<Value> {
    let r = cx
        .send_request(
            InitializeRequest::new(agent_client_protocol::schema::ProtocolVersion::V1)
                .client_capabilities(caps),
        )
        .block_task()
        .await?;
    Ok(serde_json::to_value(&r).unwrap())
}

fn find<'a>(list: &'a [Value], kind: &str) -> Vec<&'a Value> {
    list.iter().filter(|u| u["sessionUpdate"] == kind).collect()
}

#[test]
fn an_editor_sees_the_diff_answers_the_question_cancels_and_loads_the_session_again() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "edit",
            json!({"path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]}),
        ),
        Turn::text("Edited a.txt."),
        Turn::text("slow ".repeat(300)).slow(20),
    ]);
    let cwd = dir.clone();
    let ids = Arc::new(Mutex::new(String::new()));
    let id_out = ids.clone();
    let seen = editor(&home, &llm, &dir, "allow", async move |cx, seen| {
        let caps = init(&cx).await?;
        assert_eq!(caps["agentCapabilities"]["loadSession"], true, "{caps}");
        let sid =
            cx.send_request(NewSessionRequest::new(cwd.clone())).block_task().await?.session_id;
        *id_out.lock().unwrap() = sid.0.to_string();
        let r = cx
            .send_request(PromptRequest::new(sid.clone(), vec!["change two to 2".into()]))
            .block_task()
            .await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        // A slow answer, cancelled once it has begun: the prompt ends as cancelled.
        let before = seen.lock().unwrap().updates.len();
        let pending = cx.send_request(PromptRequest::new(sid.clone(), vec!["talk".into()]));
        let deadline = Instant::now() + T;
        while seen.lock().unwrap().updates.len() <= before && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cx.send_notification(CancelNotification::new(sid.clone()))?;
        assert_eq!(pending.block_task().await?.stop_reason, StopReason::Cancelled);
        Ok(())
    });
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n2\nthree\n");
    let seen = seen.lock().unwrap();
    let calls = find(&seen.updates, "tool_call");
    assert_eq!(calls.len(), 1, "{:#?}", seen.updates);
    let call = calls[0];
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "edit a.txt");
    assert_eq!(call["locations"][0]["path"], dir.join("a.txt").to_str().unwrap());
    let diff = &call["content"][0];
    assert_eq!(diff["type"], "diff", "{call}");
    assert!(diff["oldText"].as_str().unwrap().contains("two\n"), "{diff}");
    assert!(diff["newText"].as_str().unwrap().contains("2\n"), "{diff}");
    assert_eq!(seen.questions.len(), 1);
    let q = &seen.questions[0];
    assert_eq!(q["toolCall"]["toolCallId"], call["toolCallId"], "{q}");
    let kinds: Vec<&Value> = q["options"].as_array().unwrap().iter().map(|o| &o["kind"]).collect();
    assert_eq!(kinds, [&json!("allow_once"), &json!("allow_always"), &json!("reject_once")]);
    let done = find(&seen.updates, "tool_call_update");
    assert!(
        done.iter().any(|u| u["status"] == "completed" && u["toolCallId"] == call["toolCallId"])
    );
    let text: String = find(&seen.updates, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(text.contains("Edited a.txt.") && text.contains("slow"), "{text}");
    drop(seen);

    // A second editor loads the session: its conversation comes back as updates.
    let id = ids.lock().unwrap().clone();
    let cwd = dir.clone();
    let seen = editor(&home, &llm, &dir, "allow", async move |cx, _| {
        init(&cx).await?;
        let sid = agent_client_protocol::v1::schema::SessionId::new(id);
        cx.send_request(LoadSessionRequest::new(sid, cwd)).block_task().await?;
        Ok(())
    });
    let seen = seen.lock().unwrap();
    let user: Vec<&str> = find(&seen.updates, "user_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(user, ["change two to 2", "talk"], "{:#?}", seen.updates);
    assert_eq!(find(&seen.updates, "tool_call").len(), 1);
    assert!(seen.questions.is_empty());
}

#[test]
fn an_editor_offering_its_files_has_reads_and_edits_go_through_its_buffers() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.txt");
    std::fs::write(&file, "saved on disk\n").unwrap();
    // The editor has a buffer for a denied file too: the rule holds all the same.
    let global = home.dir.path().join("rab/agent");
    std::fs::create_dir_all(&global).unwrap();
    let deny = r#"{"permissions": {"deny": ["read(secret.txt)"]}}"#;
    std::fs::write(global.join("settings.json"), deny).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("read", json!({"path": "a.txt"})),
        Turn::tool_call(
            "edit",
            json!({"path": "a.txt", "edits": [{"old_text": "unsaved", "new_text": "edited"}]}),
        ),
        Turn::tool_call("read", json!({"path": "secret.txt"})),
        Turn::tool_call("write", json!({"path": "../outside.txt", "content": "escaped"})),
        Turn::text("done"),
    ]);
    let (cwd, key) = (dir.clone(), file.display().to_string());
    let secret = dir.join("secret.txt").display().to_string();
    let seen = editor(&home, &llm, &dir, "allow", async move |cx, seen| {
        seen.lock().unwrap().buffers.insert(key, "unsaved buffer text\n".into());
        seen.lock().unwrap().buffers.insert(secret, "TOKEN=leaked\n".into());
        let fs = FileSystemCapabilities::new().read_text_file(true).write_text_file(true);
        init_with(&cx, ClientCapabilities::new().fs(fs)).await?;
        let sid = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?.session_id;
        let r =
            cx.send_request(PromptRequest::new(sid, vec!["fix it".into()])).block_task().await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        Ok(())
    });
    // The model read the editor's text, not the disk's.
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("unsaved buffer text"), "{results:?}");
    // The edit was made on that text and written through the editor; the disk is the
    // editor's to save.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.buffers[&file.display().to_string()], "edited buffer text\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "saved on disk\n");
    // The deny rule and the sandbox's roots are checked before the editor is asked.
    assert_eq!(llm.requests().len(), 5, "{:#?}", seen.updates);
    let results: Vec<String> =
        (3..5).map(|i| llm.requests()[i].tool_results().last().unwrap().1.clone()).collect();
    assert!(
        !results[0].contains("leaked") && results[0].contains("denied by the rule"),
        "{results:?}"
    );
    assert!(!seen.buffers.keys().any(|k| k.ends_with("outside.txt")), "{:?}", seen.buffers.keys());
    assert!(!home.dir.path().join("outside.txt").exists());
    assert!(results[1].contains("is outside the workspace"), "{results:?}");
}

#[test]
fn commands_run_in_the_editors_terminal_only_when_asked() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    let turns = || {
        [Turn::tool_call("bash", json!({"command": "echo from-the-terminal"})), Turn::text("done")]
    };
    let talk = |cwd: std::path::PathBuf| {
        async move |cx: v1::ConnectionTo<Agent>, _: Arc<Mutex<Seen>>| {
            init_with(&cx, ClientCapabilities::new().terminal(true)).await?;
            let sid = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?.session_id;
            let r =
                cx.send_request(PromptRequest::new(sid, vec!["run".into()])).block_task().await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok(())
        }
    };
    // Offered but not asked for: the command runs in rab's sandbox.
    llm.script(turns());
    let seen = editor_with(&home, &llm, &dir, &["--yolo"], "allow", talk(dir.clone()));
    assert!(seen.lock().unwrap().terminals.is_empty());
    assert!(llm.requests()[1].tool_results()[0].1.contains("from-the-terminal"));
    // Asked for: the editor runs it, the model gets its output, the call shows it.
    llm.script(turns());
    let seen = editor_with(
        &home,
        &llm,
        &dir,
        &["--yolo", "--editor-terminal"],
        "allow",
        talk(dir.clone()),
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.terminals.len(), 1, "{:?}", seen.terminals);
    assert_eq!(seen.terminals[0].0, "-c echo from-the-terminal");
    assert!(llm.requests()[3].tool_results()[0].1.contains("from-the-terminal"));
    let shown = find(&seen.updates, "tool_call_update");
    assert!(shown.iter().any(|u| u["content"][0]["type"] == "terminal"), "{:#?}", seen.updates);
    assert!(shown.iter().any(|u| u["status"] == "completed"));
}

/// A JSON-RPC line reader and writer over the child's pipes.
/// The response to request `id`.
fn response(w: &mut Piped, id: i64) -> Value {
    w.wait(&format!("response {id}"), |v| v["id"] == id && v.get("method").is_none())
}

#[test]
fn a_hand_written_transcript_refuses_a_command_and_bad_requests_get_errors() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call("bash", json!({"command": "touch refused.txt"})),
        Turn::text("Understood."),
    ]);
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.current_dir(&dir).args(["--mode", "acp"]);
    let mut w = Piped::spawn(cmd);
    w.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}}}).to_string());
    let r = response(&mut w, 0);
    assert_eq!(r["result"]["protocolVersion"], 1, "{r}");
    assert_eq!(r["result"]["agentInfo"]["name"], "rab");
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": dir, "mcpServers": []}}).to_string());
    let sid = response(&mut w, 1)["result"]["sessionId"].as_str().unwrap().to_owned();
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "make a file"}]}}).to_string());
    let ask = w.wait("a permission request", |v| v["method"] == "session/request_permission");
    assert_eq!(ask["params"]["sessionId"], sid.as_str());
    let call =
        w.seen.iter().find(|v| v["params"]["update"]["sessionUpdate"] == "tool_call").unwrap();
    assert_eq!(call["params"]["update"]["kind"], "execute");
    assert_eq!(call["params"]["update"]["title"], "bash $ touch refused.txt");
    w.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}}).to_string());
    let end = response(&mut w, 2);
    assert_eq!(end["result"]["stopReason"], "end_turn", "{end}");
    assert!(!dir.join("refused.txt").exists());
    let results = llm.requests()[1].tool_results();
    assert!(results[0].1.contains("denied") || results[0].1.contains("refused"), "{results:?}");
    let failed = w.seen.iter().any(|v| {
        v["params"]["update"]["sessionUpdate"] == "tool_call_update"
            && v["params"]["update"]["status"] == "failed"
    });
    assert!(failed, "{:#?}", w.seen);
    // Bad requests: an unknown session, a cwd that is not absolute, an unknown method.
    w.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": []}}).to_string());
    assert!(response(&mut w, 3)["error"]["data"].as_str().unwrap().contains("no session nope"));
    w.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "rel/dir", "mcpServers": []}}).to_string());
    assert!(response(&mut w, 4)["error"]["data"].as_str().unwrap().contains("absolute"));
    w.send(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "session/teleport", "params": {}}).to_string(),
    );
    assert_eq!(response(&mut w, 5)["error"]["code"], -32601);
    w.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "session/load", "params": {"sessionId": "nope", "cwd": dir, "mcpServers": []}}).to_string());
    assert!(response(&mut w, 6)["error"]["data"].as_str().unwrap().contains("no session matches"));
    w.end();
}

#[test]
fn issue_34_a_line_that_is_not_utf8_gets_a_parse_error_and_rab_keeps_serving() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let mut cmd = home.rab_for("anthropic-messages", &llm, Some("k"));
    cmd.args(["--mode", "acp"]);
    let mut w = Piped::spawn(cmd);
    w.send_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"\xff\xfe\"}\n");
    let err = w.wait("a parse error", |v| v["error"]["code"] == -32700);
    assert!(err["error"]["data"]["line"].as_str().unwrap().contains("not UTF-8"), "{err}");
    w.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}).to_string());
    let r = response(&mut w, 0);
    assert_eq!(r["result"]["protocolVersion"], 1, "{r}");
    w.end();
}

/// A JSON-RPC request `id` to rab, and its response.
fn request(w: &mut Piped, id: i64, method: &str, params: Value) -> Value {
    w.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
    response(w, id)
}

/// `rab --mode acp` in a new project with no key anywhere, initialized: the editor's
/// pipes, the project and the sign-in methods rab offered.
fn keyless_editor(home: &Home, llm: &FakeLlm) -> (Piped, std::path::PathBuf, Vec<Value>) {
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = home.rab_for("anthropic-messages", llm, None);
    cmd.current_dir(&dir).args(["--mode", "acp"]);
    let mut w = Piped::spawn(cmd);
    let r =
        request(&mut w, 0, "initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let methods = r["result"]["authMethods"].as_array().cloned().unwrap_or_default();
    (w, dir, methods)
}

#[test]
fn issue_36_without_a_key_the_editor_gets_auth_methods_and_auth_required() {
    let home = Home::new();
    let llm = FakeLlm::start();
    let (mut w, dir, methods) = keyless_editor(&home, &llm);
    let login = methods.iter().find(|m| m["id"] == "login-anthropic").expect("a login method");
    assert_eq!(login["type"], "terminal", "{login}");
    assert_eq!(login["args"], json!(["login", "anthropic"]), "{login}");
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": dir, "mcpServers": []}}).to_string());
    let e = response(&mut w, 1);
    assert_eq!(e["error"]["code"], -32000, "auth_required, not invalid params: {e}");
    assert!(e["error"]["data"].as_str().unwrap().contains("rab login anthropic"), "{e}");
    assert!(llm.requests().is_empty());
    w.end();
}

#[test]
fn issue_37_options_after_acp_as_an_editors_settings_give_them_and_the_commands_listed() {
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let llm = FakeLlm::start();
    llm.script([Turn::text("from the model chosen after acp"), Turn::text("and before it")]);
    // Zed's `agent_servers`: {"command": "rab", "args": ["acp", "--model", …]}.
    for args in [
        &[
            "acp",
            "--provider",
            "anthropic",
            "--api",
            "anthropic-messages",
            "--model",
            "claude-haiku-4-5",
        ][..],
        &[
            "--provider",
            "anthropic",
            "--api",
            "anthropic-messages",
            "--model",
            "claude-haiku-4-5",
            "acp",
        ][..],
    ] {
        let mut cmd = home.rab();
        cmd.env("ANTHROPIC_BASE_URL", llm.url()).env("ANTHROPIC_API_KEY", "k");
        cmd.current_dir(&dir).args(args);
        let cwd = dir.clone();
        let seen = editor_cmd(cmd, "allow", async move |cx, _seen| {
            init(&cx).await?;
            let sid = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?.session_id;
            let r =
                cx.send_request(PromptRequest::new(sid, vec!["hi".into()])).block_task().await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok(())
        });
        let updates = seen.lock().unwrap().updates.clone();
        let commands = find(&updates, "available_commands_update");
        assert_eq!(commands.len(), 1, "{updates:?}");
        let names: Vec<&str> = commands[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert!(names.contains(&"compact") && names.contains(&"model"), "{names:?}");
    }
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests.iter().all(|r| r.body["model"] == "claude-haiku-4-5"),
        "{:?}",
        requests[0].body["model"]
    );
}

#[test]
fn issue_37_an_editor_signs_in_with_a_key_it_passes_to_authenticate() {
    let home = Home::new();
    let llm = FakeLlm::start();
    llm.script([Turn::text("signed in")]);
    let (mut w, dir, methods) = keyless_editor(&home, &llm);
    let send = request;
    let by_id = |id: &str| methods.iter().find(|m| m["id"] == id).cloned();
    let entry = by_id("api-key-anthropic").expect("a key-entry method");
    assert!(entry.get("type").is_none() || entry["type"] == "agent", "{entry}");
    let oauth = by_id("oauth-openai").expect("the ChatGPT sign-in");
    assert_eq!(oauth["args"], json!(["login", "openai", "--oauth"]), "{oauth}");
    // A terminal method not yet run: still no key.
    let e = send(&mut w, 1, "authenticate", json!({"methodId": "login-anthropic"}));
    assert_eq!(e["error"]["code"], -32000, "{e}");
    // The key-entry method without a key says where it goes.
    let e = send(&mut w, 2, "authenticate", json!({"methodId": "api-key-anthropic"}));
    assert!(e["error"]["data"].as_str().unwrap().contains("_meta.apiKey"), "{e}");
    let e = send(
        &mut w,
        3,
        "authenticate",
        json!({"methodId": "api-key-nope", "_meta": {"apiKey": "x"}}),
    );
    assert!(e["error"]["data"].as_str().unwrap().contains("unknown provider nope"), "{e}");
    // A key with a line break inside is refused before anything is stored.
    let e = send(
        &mut w,
        9,
        "authenticate",
        json!({"methodId": "api-key-anthropic", "_meta": {"apiKey": "sk-a\nx-injected: 1"}}),
    );
    assert!(e["error"]["data"].as_str().unwrap().contains("nothing stored"), "{e}");
    assert!(!home.dir.path().join("rab/agent/auth.json").exists());
    let ok = send(
        &mut w,
        4,
        "authenticate",
        json!({"methodId": "api-key-anthropic", "_meta": {"apiKey": " sk-typed-in-the-editor \n"}}),
    );
    assert!(ok.get("error").is_none(), "{ok}");
    // Stored as /login stores it, and used from the next session on.
    let auth = std::fs::read_to_string(home.dir.path().join("rab/agent/auth.json")).unwrap();
    assert!(auth.contains("sk-typed-in-the-editor"), "{auth}");
    let ok = send(&mut w, 5, "authenticate", json!({"methodId": "login-anthropic"}));
    assert!(ok.get("error").is_none(), "{ok}");
    let r = send(&mut w, 6, "session/new", json!({"cwd": dir, "mcpServers": []}));
    let sid = r["result"]["sessionId"].clone();
    assert!(sid.is_string(), "{r}");
    w.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}}).to_string());
    let r = response(&mut w, 7);
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(llm.requests()[0].header("x-api-key"), Some("sk-typed-in-the-editor"));
    w.end();
}

/// The official ACP TypeScript SDK (`@agentclientprotocol/sdk`), when `.ci/run`
/// installed it into target/acp-sdk.
fn acp_sdk() -> Option<std::path::PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    let entry = workspace
        .join("target/acp-sdk/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js");
    entry.is_file().then_some(entry)
}

#[test]
fn the_official_typescript_sdk_client_sees_the_diff_the_plan_and_the_commands() {
    let Some(sdk) = acp_sdk() else {
        eprintln!(
            "skipped: @agentclientprotocol/sdk is not installed in target/acp-sdk (.ci/run \
             installs it with npm); the tests above drive rab with the Rust client"
        );
        return;
    };
    if std::process::Command::new("node").arg("--version").output().is_err() {
        eprintln!("skipped: node is not installed");
        return;
    }
    let home = Home::new();
    let dir = home.dir.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let llm = FakeLlm::start();
    llm.script([
        Turn::tool_call(
            "todo_write",
            json!({"todos": [{"content": "edit a.txt", "status": "in_progress"}]}),
        ),
        Turn::tool_call(
            "edit",
            json!({"path": "a.txt", "edits": [{"old_text": "two", "new_text": "2"}]}),
        ),
        Turn::text("Edited a.txt."),
    ]);
    let args = json!(["acp", "--provider", "anthropic", "--api", "anthropic-messages"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_sdk/drive.mjs");
    let out = home
        .node(&script, &llm)
        .env("ACP_SDK", &sdk)
        .env("PROJECT_DIR", &dir)
        .env("RAB_ARGS", args.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "drive.mjs failed:\n{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_eq!(report["stopReason"], "end_turn", "{report}");
    assert_eq!(report["init"]["agentInfo"]["name"], "rab", "{report}");
    let updates = report["updates"].as_array().unwrap();
    assert_eq!(find(updates, "available_commands_update").len(), 1, "{updates:?}");
    let plan = find(updates, "plan");
    assert_eq!(plan[0]["entries"][0]["content"], "edit a.txt", "{plan:?}");
    let diff = updates
        .iter()
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff: {updates:?}"));
    assert_eq!(
        (diff["oldText"].as_str(), diff["newText"].as_str()),
        (Some("one\ntwo\nthree\n"), Some("one\n2\nthree\n")),
        "{diff}"
    );
    let located = updates.iter().any(|u| {
        u["locations"].as_array().is_some_and(|l| {
            l.iter().any(|l| l["path"].as_str().is_some_and(|p| p.ends_with("a.txt")))
        })
    });
    assert!(located, "the edit's location: {updates:?}");
    assert_eq!(report["permissions"].as_array().unwrap().len(), 1, "the edit asked: {report}");
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n2\nthree\n");
}
