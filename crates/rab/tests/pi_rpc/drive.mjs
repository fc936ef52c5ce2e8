// Drives `rab --mode rpc` with pi's own RpcClient (from the npm package
// @mariozechner/pi-coding-agent, whose path is in PI_RPC_CLIENT) through every method
// it has, and checks what each returns. The fake model's answers are scripted by the
// Rust test that runs this (crates/rab/tests/suite/pi_rpc.rs), in the order used here.
// Prints one JSON object: {"called": [...], "failures": [...], "events": [...]}.
import { pathToFileURL } from "node:url";
import * as fs from "node:fs";
import * as path from "node:path";

const { RpcClient } = await import(pathToFileURL(process.env.PI_RPC_CLIENT).href);

const called = [];
const failures = [];
const seen = new Set();
const expect = (what, ok, detail) => {
  if (!ok) failures.push(`${what}: ${JSON.stringify(detail)}`);
};
async function call(method, run, check) {
  called.push(method);
  try {
    const result = await run();
    if (check) check(result);
    return result;
  } catch (e) {
    failures.push(`${method} threw: ${e.message}`);
    return undefined;
  }
}
const waitFor = (client, pred, ms = 20000) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out waiting for an event")), ms);
    const off = client.onEvent((e) => {
      if (pred(e)) {
        clearTimeout(timer);
        off();
        resolve(e);
      }
    });
  });

const client = new RpcClient({
  cliPath: path.join(path.dirname(new URL(import.meta.url).pathname), "rab.mjs"),
  cwd: process.env.PROJECT_DIR,
  args: JSON.parse(process.env.RAB_ARGS),
});
client.onEvent((e) => seen.add(e.type));
await client.start();

try {
  // The state, then a prompt streamed as pi's events.
  const state = await call("getState", () => client.getState(), (s) => {
    expect("state.model.id", s.model?.id === "claude-sonnet-5-5", s.model);
    expect("state.model.provider", s.model?.provider === "anthropic", s.model);
    expect("state.isStreaming", s.isStreaming === false, s);
    expect("state.sessionId", typeof s.sessionId === "string" && s.sessionId.length > 0, s);
    expect("state.steeringMode", s.steeringMode === "one-at-a-time", s);
  });
  const events = await call("promptAndWait", () => client.promptAndWait("hello"), (ev) => {
    const types = ev.map((e) => e.type);
    for (const t of ["agent_start", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"]) {
      expect(`prompt event ${t}`, types.includes(t), types);
    }
    const deltas = ev.filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta");
    expect("text deltas", deltas.map((e) => e.assistantMessageEvent.delta).join("") === "Hello from rab.", deltas);
    const last = deltas.at(-1);
    expect("partial message", last?.message?.content?.[0]?.text === "Hello from rab.", last?.message);
    const end = ev.find((e) => e.type === "agent_end");
    expect("agent_end messages", end.messages.map((m) => m.role).join(",") === "user,assistant", end.messages);
    expect("assistant usage", typeof end.messages[1].usage?.cost?.total === "number", end.messages[1]);
  });
  // A tool call: tool_execution_start/end and a toolResult message.
  await call("prompt", async () => {
    const done = client.collectEvents();
    await client.prompt("run a command");
    return done;
  }, (ev) => {
    const start = ev.find((e) => e.type === "tool_execution_start");
    expect("tool_execution_start", start?.toolName === "bash" && start.args.command === "echo tool-out", start);
    const end = ev.find((e) => e.type === "tool_execution_end");
    expect("tool_execution_end", end?.isError === false && JSON.stringify(end.result.content).includes("tool-out"), end);
    const result = ev.find((e) => e.type === "message_end" && e.message.role === "toolResult");
    expect("toolResult message", result?.message.toolCallId === start?.toolCallId, result);
    const call = ev.find((e) => e.type === "message_update" && e.assistantMessageEvent.type === "toolcall_end");
    expect("toolcall_end", call?.assistantMessageEvent.toolCall?.name === "bash", call);
    const turnEnd = ev.find((e) => e.type === "turn_end" && e.toolResults.length === 1);
    expect("turn_end toolResults", !!turnEnd, ev.filter((e) => e.type === "turn_end"));
  });
  // Steering and a follow-up while the agent works.
  // Listening before the prompt: its response and first events may come in one read.
  const ended = client.waitForIdle();
  const started = waitFor(client, (e) => e.type === "tool_execution_start");
  await call("prompt", () => client.prompt("wait a bit"));
  await started;
  await call("steer", () => client.steer("STEERED"));
  await call("followUp", () => client.followUp("FOLLOWED"));
  await ended;
  await call("getLastAssistantText", () => client.getLastAssistantText(), (t) => expect("last text", t === "followed", t));
  await call("getMessages", () => client.getMessages(), (m) => {
    const roles = m.map((x) => x.role);
    expect("roles", roles.includes("toolResult") && roles[0] === "user" && roles.includes("assistant"), roles);
    const users = m.filter((x) => x.role === "user").map((x) => x.content[0].text);
    expect("steered and followed", users.includes("STEERED") && users.includes("FOLLOWED"), users);
  });
  await call("getSessionStats", () => client.getSessionStats(), (s) => {
    expect("stats.userMessages", s.userMessages === 5, s);
    expect("stats.toolCalls", s.toolCalls === 2 && s.toolResults === 2, s);
    expect("stats.tokens", s.tokens.total > 0, s.tokens);
  });
  await call("compact", () => client.compact("keep the greeting"), (c) => {
    expect("compact.summary", c.summary.includes("SUMMARY"), c);
    expect("compact.firstKeptEntryId", typeof c.firstKeptEntryId === "string", c);
    expect("compact.tokensBefore", c.tokensBefore > 0, c);
  });
  // An answer aborted while it streams.
  const aborted = client.waitForIdle();
  const streaming = waitFor(client, (e) => e.type === "message_update");
  await call("prompt", () => client.prompt("talk slowly"));
  await streaming;
  await call("abort", () => client.abort());
  await aborted;
  await call("bash", () => client.bash("echo $((6*7))"), (r) => {
    expect("bash.output", r.output.trim() === "42", r);
    expect("bash.exitCode", r.exitCode === 0 && r.cancelled === false, r);
  });
  await call("bash", () => client.bash("exit 3"), (r) => expect("bash exit 3", r.exitCode === 3, r));
  await call("abortBash", () => client.abortBash());
  await call("abortRetry", () => client.abortRetry());
  await call("setAutoRetry", () => client.setAutoRetry(false));
  await call("setAutoCompaction", () => client.setAutoCompaction(false));
  await call("setSteeringMode", () => client.setSteeringMode("all"));
  await call("setFollowUpMode", () => client.setFollowUpMode("all"));
  await call("getState", () => client.getState(), (s) => {
    expect("autoCompactionEnabled off", s.autoCompactionEnabled === false, s);
    expect("steeringMode all", s.steeringMode === "all" && s.followUpMode === "all", s);
  });
  await call("setAutoRetry", () => client.setAutoRetry(true));
  await call("setAutoCompaction", () => client.setAutoCompaction(true));
  await call("setThinkingLevel", () => client.setThinkingLevel("low"));
  await call("cycleThinkingLevel", () => client.cycleThinkingLevel(), (r) => expect("cycled level", r?.level === "medium", r));
  await call("setModel", () => client.setModel("anthropic", "claude-haiku-4-5"), (m) => expect("setModel", m.id === "claude-haiku-4-5" && typeof m.contextWindow === "number", m));
  await call("cycleModel", () => client.cycleModel(), (r) => expect("cycleModel", r && r.model.provider === "anthropic" && r.model.id !== "claude-haiku-4-5", r));
  await call("getAvailableModels", () => client.getAvailableModels(), (ms) => {
    expect("available anthropic", ms.some((m) => m.id === "claude-sonnet-5"), ms.length);
    expect("only with keys", ms.every((m) => m.provider !== "openai"), ms.map((m) => m.provider));
  });
  await call("getCommands", () => client.getCommands(), (cs) => {
    const greet = cs.find((c) => c.name === "greet");
    expect("prompt command", greet?.source === "prompt" && greet.sourceInfo.path.endsWith("greet.md"), greet);
    expect("skill", cs.some((c) => c.name === "skill:tidy" && c.source === "skill"), cs.map((c) => c.name));
  });
  await call("setSessionName", () => client.setSessionName("pi client run"));
  await call("getState", () => client.getState(), (s) => expect("sessionName", s.sessionName === "pi client run", s));
  const html = path.join(process.env.PROJECT_DIR, "session.html");
  await call("exportHtml", () => client.exportHtml(html), (r) => {
    expect("export path", r.path === html && fs.readFileSync(html, "utf8").includes("<html"), r);
  });
  const forkable = await call("getForkMessages", () => client.getForkMessages(), (ms) => {
    expect("fork messages", ms.length >= 1 && ms.every((m) => typeof m.entryId === "string"), ms);
  });
  const original = (await client.getState()).sessionFile;
  const hello = forkable?.find((m) => m.text === "run a command");
  await call("fork", () => client.fork(hello?.entryId), (r) => expect("fork", r.text === "run a command" && r.cancelled === false, r));
  await call("getMessages", () => client.getMessages(), (m) => expect("forked before the message", m.map((x) => x.role).join(",") === "user,assistant", m.map((x) => x.role)));
  await call("clone", () => client.clone(), (r) => expect("clone", r.cancelled === false, r));
  await call("switchSession", () => client.switchSession(original), (r) => expect("switch", r.cancelled === false, r));
  await call("getState", () => client.getState(), (s) => expect("switched back", s.sessionFile === original, s));
  await call("newSession", () => client.newSession(original), (r) => expect("new", r.cancelled === false, r));
  await call("getState", () => client.getState(), (s) => expect("new session", s.messageCount === 0 && s.sessionFile !== original, s));
} finally {
  await client.stop();
}
console.log(JSON.stringify({ called, failures, events: [...seen].sort() }));
