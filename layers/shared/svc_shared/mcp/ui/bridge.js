/* The view's side of MCP Apps (the io.modelcontextprotocol/ui extension, specification 2026-01-26): JSON-RPC 2.0
 * with the host window over postMessage, only what these views use. The host is the view's parent frame (a sandbox
 * proxy relays for it); a message from any other window is ignored. */
const MCP_APPS_VERSION = "2026-01-26";
const METHOD_NOT_FOUND = -32601;

class HostError extends Error {
  constructor(error) {
    super(error?.message || "The host refused the request.");
    this.code = error?.code;
  }
}

class Host {
  /** `handlers`: input(arguments), result(CallToolResult), cancelled(reason), context(hostContext). */
  constructor(appInfo, handlers = {}) {
    this.appInfo = appInfo;
    this.handlers = handlers;
    this.pending = new Map();
    this.nextId = 1;
    this.capabilities = {};
    this.context = {};
  }

  /** ui/initialize, then the initialized notification; from then on the view tells the host its size. */
  async connect() {
    window.addEventListener("message", (event) => this.receive(event));
    const answer = await this.request("ui/initialize", {
      appInfo: this.appInfo, appCapabilities: {}, protocolVersion: MCP_APPS_VERSION,
    });
    this.capabilities = answer?.hostCapabilities ?? {};
    this.context = answer?.hostContext ?? {};
    this.notify("ui/notifications/initialized");
    this.followSize();
    return this;
  }

  send(message) {
    window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  notify(method, params) {
    this.send(params === undefined ? { method } : { method, params });
  }

  receive({ source, data }) {
    if (source !== window.parent || data?.jsonrpc !== "2.0") return;
    if (data.method === undefined) {
      const waiting = this.pending.get(data.id);
      if (!waiting) return;
      this.pending.delete(data.id);
      if (data.error) waiting.reject(new HostError(data.error));
      else waiting.resolve(data.result);
    } else if (data.id !== undefined) {
      this.answer(data);
    } else {
      this.notified(data.method, data.params ?? {});
    }
  }

  /** The host's requests: teardown and ping are acknowledged; this view offers nothing else. */
  answer({ id, method }) {
    if (method === "ui/resource-teardown" || method === "ping") this.send({ id, result: {} });
    else this.send({ id, error: { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` } });
  }

  notified(method, params) {
    const on = this.handlers;
    if (method === "ui/notifications/tool-input") on.input?.(params.arguments ?? {});
    else if (method === "ui/notifications/tool-result") on.result?.(params);
    else if (method === "ui/notifications/tool-cancelled") on.cancelled?.(params.reason);
    else if (method === "ui/notifications/host-context-changed") {
      this.context = { ...this.context, ...params };
      on.context?.(this.context);
    }
  }

  /** ui/notifications/size-changed whenever the document's height or the window's width changes. */
  followSize() {
    let queued = false, width = 0, height = 0;
    const measure = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        const root = document.documentElement;
        const before = root.style.height;
        root.style.height = "max-content";
        const h = Math.ceil(root.getBoundingClientRect().height);
        root.style.height = before;
        const w = Math.ceil(window.innerWidth);
        if (w !== width || h !== height) {
          width = w;
          height = h;
          this.notify("ui/notifications/size-changed", { width, height });
        }
      });
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(document.documentElement);
    observer.observe(document.body);
  }

  /** One of this server's tools, called through the host (which holds the connection and the token). */
  callTool(name, args, extra = {}) {
    return this.request("tools/call", { name, arguments: args, ...extra });
  }

  openLink(url) {
    return this.request("ui/open-link", { url });
  }
}
