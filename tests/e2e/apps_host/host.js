// A web host of MCP Apps for the browser test, as a real client builds one: the official host-side bridge
// (AppBridge of @modelcontextprotocol/ext-apps) over the official MCP client, connected to the server's /mcp
// through this page's own origin (the test's relay holds the access token, as a host's backend does: nothing
// in this page or in a view carries it). Each view runs in a sandbox proxy on another origin (sandbox.html),
// which renders it in an inner frame under the CSP the view declares. Bundled by the test with vite.
import { AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const HOST = { name: "svc test host", version: "1.0.0" };
const UI_EXTENSION = "io.modelcontextprotocol/ui";
const TASKS = "io.modelcontextprotocol/tasks";

// relayed: what the views asked of the host ({method, task}: whether a tools/call asked for a task).
const state = { client: null, tools: new Map(), openedLinks: [], relayed: [], tasks: null, bridges: {} };
window.svcHost = state;

/** A host that follows tasks keeps a second connection for them: a 2025-11-25 session that declared the tasks
 * capability (and the views) at initialize. The views' task-augmented tools/call and their tasks/* requests go
 * through it as they came; everything else through the official client. */
class TaskSession {
  async open() {
    const capabilities = { tasks: {}, extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
    await this.request("initialize", { protocolVersion: "2025-11-25", capabilities, clientInfo: HOST });
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return this;
  }

  async post(message) {
    const headers = {
      "Content-Type": "application/json", Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
    };
    if (this.session) headers["Mcp-Session-Id"] = this.session;
    const answer = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(message) });
    this.session = this.session ?? answer.headers.get("Mcp-Session-Id");
    return answer;
  }

  async request(method, params) {
    const answer = await this.post({ jsonrpc: "2.0", id: 1, method, params });
    const reply = await answer.json();
    if (reply.error) throw new ProtocolError(reply.error.code, reply.error.message, reply.error.data);
    return reply.result;
  }
}

/** Relays the view's tools/call (as a task when it asks for one and this host follows tasks) and tasks/*. */
function relayTasks(bridge) {
  const plain = bridge.oncalltool;
  bridge.oncalltool = async (params, extra) => {
    state.relayed.push({ method: "tools/call", name: params.name, task: params.task !== undefined });
    if (params.task !== undefined && state.tasks) return state.tasks.request("tools/call", params);
    const { task, ...rest } = params;  // a host without tasks drops the field and answers the plain result
    return plain(rest, extra);
  };
  if (!state.tasks) return;
  for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
    bridge.setRequestHandler(method, async (request) => {
      state.relayed.push({ method, task: true });
      return state.tasks.request(method, request.params);
    });
  }
}

async function connect({ tasks = false } = {}) {
  const client = new Client(HOST, {
    capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  state.client = client;
  const listed = await client.listTools();
  state.tools = new Map(listed.tools.map((tool) => [tool.name, tool]));
  state.tasks = tasks ? await new TaskSession().open() : null;
  return { capabilities: client.getServerCapabilities(), tools: [...state.tools.keys()] };
}

async function viewOf(tool) {
  const uri = tool?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(`${tool?.name} has no view`);
  const read = await state.client.readResource({ uri });
  const [content] = read.contents;
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`unexpected MIME type ${content.mimeType}`);
  return { uri, html: content.text, csp: content._meta?.ui?.csp ?? {} };
}

function sandboxFrame(sandboxUrl, id) {
  const frame = document.createElement("iframe");
  frame.id = id;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  frame.src = sandboxUrl;
  document.getElementById("views").append(frame);
  return new Promise((resolve) => {
    const ready = ({ source, data }) => {
      if (source === frame.contentWindow && data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", ready);
        resolve(frame);
      }
    };
    window.addEventListener("message", ready);
  });
}

/** Calls a tool as the model would, and shows its result in the tool's view. */
async function show(name, args, sandboxBase) {
  const tool = state.tools.get(name);
  const view = await viewOf(tool);
  const sandboxUrl = `${sandboxBase}?csp=${encodeURIComponent(JSON.stringify(view.csp))}`;
  const frame = await sandboxFrame(sandboxUrl, `view-${name}`);
  const capabilities = state.client.getServerCapabilities();
  const bridge = new AppBridge(state.client, HOST, {
    openLinks: {}, serverTools: capabilities?.tools, serverResources: capabilities?.resources, logging: {},
    ...(state.tasks ? { experimental: { [TASKS]: {} } } : {}),
  }, { hostContext: { theme: "light", displayMode: "inline", locale: "en-GB", platform: "web" } });
  bridge.onopenlink = async ({ url }) => { state.openedLinks.push(url); return {}; };
  bridge.onsizechange = async ({ height }) => { if (height !== undefined) frame.style.height = `${height}px`; };
  bridge.onloggingmessage = () => {};
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  relayTasks(bridge);
  state.bridges[name] = bridge;
  await bridge.sendSandboxResourceReady({ html: view.html, csp: view.csp });
  await initialized;
  bridge.sendToolInput({ arguments: args });
  const result = await state.client.callTool({ name, arguments: args });
  bridge.sendToolResult(result);
  return { uri: view.uri, csp: view.csp, result };
}

window.svcConnect = connect;
window.svcShow = show;
