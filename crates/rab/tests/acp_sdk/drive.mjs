// Drives `rab acp` with the official ACP TypeScript SDK's client (@agentclientprotocol/sdk,
// whose entry point is in ACP_SDK), as an editor does: initialize, a new session, a
// prompt whose tool calls edit a file (answered "allow once") and write a to-do list.
// Prints one JSON object: {"init", "stopReason", "updates", "permissions"}.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const { client, methods, ndJsonStream } = await import(pathToFileURL(process.env.ACP_SDK).href);
const cwd = process.env.PROJECT_DIR;
const rab = spawn(process.env.RAB_BIN, JSON.parse(process.env.RAB_ARGS), {
  cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => rab.on("exit", resolve));
const stream = ndJsonStream(Writable.toWeb(rab.stdin), Readable.toWeb(rab.stdout));
const updates = [];
const permissions = [];
const app = client({ name: "rab-acp-sdk-test" })
  .onNotification(methods.client.session.update, (ctx) => {
    updates.push(ctx.params.update);
  })
  .onRequest(methods.client.session.requestPermission, (ctx) => {
    permissions.push(ctx.params);
    const once = ctx.params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: once.optionId } };
  });
const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const done = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "change two to 2 and keep a list" }],
  });
  return { init, stopReason: done.stopReason };
});
rab.stdin.end();
await exited;
console.log(JSON.stringify({ ...report, updates, permissions }));
