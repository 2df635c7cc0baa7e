// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk),
// for the `navi acp` tests (tests/acp.rs). It starts the agent command given
// in NAVI_ACP_CMD (a JSON array), runs the steps given as JSON in argv[2], and
// prints one JSON object: everything it received, in order, and how the
// agent process ended.
//
// Steps: {"op": "initialize"} | {"op": "new", "as": "a", "cwd"?, "mcpServers"?}
//   | {"op": "load", "session": "a" or an id, "as"?} | {"op": "resume", ...}
//   | {"op": "list"} | {"op": "close", "session"}
//   | {"op": "prompt", "session", "text" | "blocks", "as"?: "p1", "wait"?: false}
//   | {"op": "await", "name": "p1"} | {"op": "cancel", "session"}
//   | {"op": "waitUpdate", "session", "kind"} | {"op": "waitPermission"}
//   | {"op": "setMode", "session", "mode"} | {"op": "setOption", "session", "id", "value"}
//   | {"op": "raw", "method", "params"} | {"op": "sleep", "ms"} | {"op": "end"}
// Permission requests are answered with NAVI_ACP_PERMISSION: an option id
// (allow_once, allow_session, reject) or "never" (no answer).
//
// The editor's file system and terminals: {"op": "initialize", "caps":
// clientCapabilities, "editor": {"buffers": {path: text}, "save": bool,
// "failRead": message, "failWrite": message, "killAfterMs": n}}. Reads answer
// from the buffers, else the disk; writes go to the buffers (and the disk with
// "save"); terminals run the command for real (stdout and stderr together);
// "killAfterMs" kills each terminal's process (SIGKILL) that long after it
// starts, as a user closing it would. Every such request is logged
// ({t: "fs_read" | "fs_write" | "terminal", ...}).
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, RequestError } from "@agentclientprotocol/sdk";

const steps = JSON.parse(process.argv[2] ?? "[]");
const cmd = JSON.parse(process.env.NAVI_ACP_CMD);
const answer = process.env.NAVI_ACP_PERMISSION ?? "allow_once";

const log = [];
const waiters = [];
const names = {};
const pending = {};
const id = (s) => names[s] ?? s;

function record(entry) {
  log.push(entry);
  for (const w of [...waiters]) {
    if (w.match(entry)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(entry);
    }
  }
}

function waitFor(match, what) {
  const found = log.find(match);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const w = { match, resolve };
    waiters.push(w);
    setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 30000);
  });
}

const child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => (stderr += d));
const exited = new Promise((resolve) =>
  child.on("exit", (code, signal) => resolve({ code, signal })),
);

const app = client({ name: "navi-acp-test" })
  .onNotification("session/update", ({ params }) => {
    record({ t: "update", session: params.sessionId, update: params.update });
  })
  .onRequest("session/request_permission", ({ params, signal }) => {
    record({ t: "permission", session: params.sessionId, request: params });
    if (answer === "never") {
      return new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          record({ t: "permission_withdrawn", session: params.sessionId });
          resolve({ outcome: { outcome: "cancelled" } });
        });
      });
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  });
let editor = {};
const terminals = {};
let nextTerminal = 1;
app
  .onRequest("fs/read_text_file", ({ params }) => {
    record({ t: "fs_read", path: params.path, line: params.line ?? null, limit: params.limit ?? null });
    if (editor.failRead) throw new RequestError(-32603, editor.failRead);
    const buffers = editor.buffers ?? {};
    let text = params.path in buffers ? buffers[params.path] : readFileSync(params.path, "utf8");
    if (params.line || params.limit) {
      const lines = text.split(/(?<=\n)/);
      const from = (params.line ?? 1) - 1;
      text = lines.slice(from, params.limit ? from + params.limit : undefined).join("");
    }
    return { content: text };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    record({ t: "fs_write", path: params.path, content: params.content });
    if (editor.failWrite) throw new RequestError(-32603, editor.failWrite);
    editor.buffers = { ...(editor.buffers ?? {}), [params.path]: params.content };
    if (editor.save) writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    const id = `term-${nextTerminal++}`;
    record({ t: "terminal", op: "create", id, params });
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    // Its own process group, killed whole (as an editor closing a terminal).
    const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env, detached: true });
    const killAll = () => {
      try { process.kill(-proc.pid, "SIGKILL"); } catch { proc.kill("SIGKILL"); }
    };
    const term = { proc, output: "", truncated: false, status: null };
    // Done at "close" (all output read), or shortly after "exit" when a
    // leftover process keeps the pipes open.
    term.exited = new Promise((resolve) => {
      let status = null;
      const done = () => {
        if (term.status === null && status !== null) term.status = status;
        if (term.status !== null) resolve(term.status);
      };
      proc.on("exit", (code, signal) => {
        status = { exitCode: code, signal };
        setTimeout(done, 300);
      });
      proc.on("close", (code, signal) => {
        status = status ?? { exitCode: code, signal };
        done();
      });
    });
    const add = (d) => {
      term.output += d;
      const limit = params.outputByteLimit;
      if (limit && Buffer.byteLength(term.output) > limit) {
        term.output = term.output.slice(-limit);
        term.truncated = true;
      }
    };
    proc.stdout.on("data", add);
    proc.stderr.on("data", add);
    proc.on("error", (e) => add(String(e)));
    term.kill = killAll;
    if (editor.killAfterMs) setTimeout(killAll, editor.killAfterMs);
    terminals[id] = term;
    return { terminalId: id };
  })
  .onRequest("terminal/output", ({ params }) => {
    const term = terminals[params.terminalId];
    record({ t: "terminal", op: "output", id: params.terminalId });
    return { output: term.output, truncated: term.truncated, exitStatus: term.status };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    record({ t: "terminal", op: "wait_for_exit", id: params.terminalId });
    return await terminals[params.terminalId].exited;
  })
  .onRequest("terminal/kill", ({ params }) => {
    record({ t: "terminal", op: "kill", id: params.terminalId });
    terminals[params.terminalId].kill();
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    record({ t: "terminal", op: "release", id: params.terminalId });
    const term = terminals[params.terminalId];
    if (term.status === null) term.kill();
    return {};
  });
const conn = app.connect(
  ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
);
const agent = conn.agent;

async function call(step, method, params) {
  try {
    const result = await agent.request(method, params);
    record({ t: "result", op: step.op, method, result: result ?? null });
    return result;
  } catch (e) {
    record({ t: "result", op: step.op, method, error: { code: e.code, message: e.message, data: e.data } });
    return undefined;
  }
}

const cwd = process.env.NAVI_ACP_CWD ?? process.cwd();
try {
  for (const step of steps) {
    switch (step.op) {
      case "initialize":
        editor = step.editor ?? {};
        await call(step, "initialize", {
          protocolVersion: 1,
          clientCapabilities: step.caps ?? { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: "navi-acp-test", version: "1" },
        });
        break;
      case "new": {
        const r = await call(step, "session/new", { cwd: step.cwd ?? cwd, mcpServers: step.mcpServers ?? [] });
        if (r && step.as) names[step.as] = r.sessionId;
        break;
      }
      case "load":
      case "resume": {
        const method = step.op === "load" ? "session/load" : "session/resume";
        const sid = id(step.session);
        const r = await call(step, method, { sessionId: sid, cwd: step.cwd ?? cwd, mcpServers: [] });
        if (r && step.as) names[step.as] = sid;
        break;
      }
      case "list":
        await call(step, "session/list", step.cwd ? { cwd: step.cwd } : {});
        break;
      case "close":
        await call(step, "session/close", { sessionId: id(step.session) });
        break;
      case "prompt": {
        const prompt = step.blocks ?? [{ type: "text", text: step.text }];
        const p = call(step, "session/prompt", { sessionId: id(step.session), prompt });
        if (step.wait === false) pending[step.as] = p;
        else await p;
        break;
      }
      case "await":
        await pending[step.name];
        break;
      case "cancel":
        await agent.notify("session/cancel", { sessionId: id(step.session) });
        break;
      case "waitUpdate":
        await waitFor(
          (e) => e.t === "update" && e.session === id(step.session) && e.update.sessionUpdate === step.kind,
          `${step.kind} in ${step.session}`,
        );
        break;
      case "waitPermission":
        await waitFor((e) => e.t === "permission", "a permission request");
        break;
      case "setMode":
        await call(step, "session/set_mode", { sessionId: id(step.session), modeId: step.mode });
        break;
      case "setOption":
        await call(step, "session/set_config_option", {
          sessionId: id(step.session), configId: step.id, value: step.value,
        });
        break;
      case "raw":
        await call(step, step.method, step.params);
        break;
      case "sleep":
        await new Promise((r) => setTimeout(r, step.ms));
        break;
      case "end":
        child.stdin.end();
        break;
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
} catch (e) {
  record({ t: "client_error", message: String(e) });
}
child.stdin.end();
const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
const end = await exited;
clearTimeout(timer);
process.stdout.write(JSON.stringify({ log, names, exit: end, stderr }) + "\n");
process.exit(0);
