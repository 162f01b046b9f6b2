"use strict";
// The service's page: no build step, no library. Everything a model, a tool or a user wrote reaches
// the page through el() and textContent, i.e. as text: never parsed as HTML. The server also sends a
// Content-Security-Policy that allows this file's script only.

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "pes-agent-token";
let token = sessionStorage.getItem(TOKEN_KEY);
let current = null; // the open thread: {id, abort, lastId}
let pending = null; // the suspension the forms answer

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children); // strings become text nodes
  return node;
}

const show = (node, visible) => { node.hidden = !visible; };

// The run's status comes two ways: the event stream and the response to the request that ran it,
// in either order (they travel on different connections). Both name it the same way, by the run's
// own status, so the last one to arrive cannot contradict the other.
function setStatus(status) {
  $("run-status").textContent = status;
}
const json = (value) => JSON.stringify(value, null, 2);

function notice(message) {
  $("notice").textContent = message || "";
  show($("notice"), Boolean(message));
}

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = (res.headers.get("content-type") || "").includes("json") ? await res.json() : null;
  if (res.status === 401) signOut("That token is not valid for this service.");
  if (!res.ok) throw new ApiError(res.status, (data && data.error && data.error.message) || res.statusText);
  return data;
}

// -- signing in ---------------------------------------------------------------------------------

async function signIn(candidate) {
  token = candidate;
  try {
    const me = await api("GET", "/me");
    sessionStorage.setItem(TOKEN_KEY, token);
    $("who").textContent = `signed in as ${me.user_id}`;
    show($("sign-in"), false); show($("app"), true); show($("sign-out"), true);
    await refreshThreads();
    const wanted = new URLSearchParams(location.hash.slice(1)).get("thread");
    if (wanted) await openThread(wanted, false);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) notice(err.message);
  }
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  token = null;
  closeStream();
  show($("app"), false); show($("sign-out"), false); show($("sign-in"), true);
  $("who").textContent = message || "";
}

// -- threads ------------------------------------------------------------------------------------

async function refreshThreads() {
  const { threads } = await api("GET", "/threads");
  const list = $("threads");
  list.replaceChildren();
  for (const thread of threads) {
    const label = thread.query || thread.title || thread.thread_id;
    const button = el("button", { type: "button", "data-thread": thread.thread_id }, label);
    if (thread.waiting_for) button.append(el("span", { class: "badge" }, thread.waiting_for));
    if (current && current.id === thread.thread_id) button.classList.add("current");
    button.addEventListener("click", () => openThread(thread.thread_id, false));
    list.append(el("li", {}, button));
  }
}

function newThreadId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function clearRun() {
  for (const id of ["conversation", "plan"]) $(id).replaceChildren();
  $("usage").tBodies[0].replaceChildren();
  $("answer").textContent = "";
  setStatus("none yet");
  hidePending();
  notice("");
}

async function openThread(id, fresh) {
  closeStream();
  clearRun();
  current = { id, abort: null, lastId: null, usage: {} };
  $("thread-id").textContent = id;
  history.replaceState(null, "", `#thread=${encodeURIComponent(id)}`);
  if (!fresh) {
    let thread;
    try {
      thread = await api("GET", `/threads/${encodeURIComponent(id)}`);
    } catch (err) {
      notice(err.message);
      return;
    }
    renderConversation(thread.history);
    showPending(thread.suspension);
  }
  await stream(current, fresh ? undefined : 0);
  await refreshThreads();
}

async function refreshThread() {
  if (!current) return;
  const thread = await api("GET", `/threads/${encodeURIComponent(current.id)}`);
  renderConversation(thread.history);
  showPending(thread.suspension);
  await refreshThreads();
}

function renderConversation(messages) {
  $("conversation").replaceChildren(
    ...messages.map((m) => el("li", { class: "message" }, el("span", { class: "role" }, m.role), m.content)),
  );
}

// -- the event stream ---------------------------------------------------------------------------

function closeStream() {
  if (current && current.abort) current.abort.abort();
}

// EventSource cannot send an Authorization header, so the stream is read with fetch. Resolves once
// the server has subscribed (its first frame), so a query sent after it misses nothing.
async function stream(thread, since) {
  const abort = new AbortController();
  thread.abort = abort;
  const headers = { Authorization: `Bearer ${token}`, Accept: "text/event-stream" };
  if (thread.lastId) headers["Last-Event-ID"] = thread.lastId;
  const query = since === undefined ? "" : `?since=${since}`;
  let res;
  try {
    res = await fetch(`/threads/${encodeURIComponent(thread.id)}/events${query}`, { headers, signal: abort.signal });
  } catch (err) {
    return;
  }
  if (!res.ok) {
    const data = await res.json().catch(() => null);
    notice((data && data.error && data.error.message) || res.statusText);
    return;
  }
  let subscribed;
  const ready = new Promise((resolve) => { subscribed = resolve; });
  readFrames(thread, res.body.pipeThrough(new TextDecoderStream()).getReader(), subscribed, abort);
  return ready;
}

async function readFrames(thread, reader, subscribed, abort) {
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        subscribed();
        handleFrame(thread, frame);
      }
    }
  } catch (err) {
    // aborted, or the connection dropped: handled below
  }
  subscribed();
  if (!abort.signal.aborted && current === thread) {
    setTimeout(() => { if (current === thread) stream(thread); }, 1000); // resumes after Last-Event-ID
  }
}

function handleFrame(thread, frame) {
  let type = null, data = "", id = null;
  for (const line of frame.split("\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
    else if (line.startsWith("id: ")) id = line.slice(4);
  }
  if (!type || current !== thread) return;
  if (id) thread.lastId = id;
  onEvent(type, JSON.parse(data));
}

function onEvent(type, event) {
  const d = event.data || {};
  switch (type) {
    case "PLAN":
    case "PLAN_UPDATE":
      renderPlan(d.todo_list || []);
      break;
    case "ITEM_STATUS":
      setItemStatus(d.item_id, d.status);
      break;
    case "TOOL_CALL":
      callBox(event.step_id, d.call_id, d.tool_name).setArgs(d.arguments);
      break;
    case "ARG_REPAIR": {
      const { call_id: callId, tool_name: tool, ...repair } = d;
      callBox(event.step_id, callId, tool).addRepair(repair);
      break;
    }
    case "TOOL_EXECUTION":
      callBox(event.step_id, d.call_id, d.tool_name).setResult(d.status, d.status === "success" ? d.output : d.error);
      break;
    case "SUSPENDED":
    case "CLARIFICATION":
      setStatus(type === "SUSPENDED" ? "suspended" : "needs_input"); // as the run's response says it
      refreshThread().catch((err) => notice(err.message));
      break;
    case "RESUMED":
      hidePending();
      setStatus("running");
      break;
    case "TOKEN":
      if (d.phase === "synthesis" && d.kind === "answer") $("answer").append(d.text);
      break;
    case "FINAL_RESPONSE":
      $("answer").textContent = d.response;
      setStatus(d.status);
      break;
    case "ERROR":
      setStatus("error");
      if (!$("answer").textContent) $("answer").textContent = `error (${d.phase || "run"}): ${d.message || d.code || ""}`;
      break;
  }
}

// -- the plan, its items and their tool calls ---------------------------------------------------

function renderPlan(items) {
  $("plan").replaceChildren(...items.map((item) => el("li", { "data-testid": "item", "data-item-id": item.id },
    el("span", { class: "description" }, item.description),
    el("span", { class: "status" }),
    el("div", { class: "calls" }))));
  for (const item of items) {
    setItemStatus(item.id, item.status);
    for (const call of item.tool_results || []) {
      const box = callBox(item.id, call.call_id, call.tool_name);
      box.setArgs(call.arguments);
      if (call.status !== "suspended") box.setResult(call.status, call.status === "success" ? call.output : call.error);
    }
  }
}

function itemNode(itemId) {
  return Array.from($("plan").children).find((li) => li.dataset.itemId === itemId) || null;
}

function setItemStatus(itemId, status) {
  const li = itemNode(itemId);
  if (!li) return;
  li.dataset.status = status;
  const badge = li.querySelector(".status");
  badge.textContent = status.replace("_", " ");
  badge.className = `status status-${status}`;
}

function callBox(itemId, callId, tool) {
  const li = itemNode(itemId);
  const calls = li ? li.querySelector(".calls") : $("plan");
  let box = Array.from(calls.children).find((node) => node.dataset.callId === callId);
  if (!box) {
    box = el("div", { class: "call", "data-testid": "call", "data-call-id": callId, "data-tool": tool },
      el("strong", {}, tool), el("pre", { class: "args" }), el("div", { class: "repairs" }), el("pre", { class: "result" }));
    calls.append(box);
  }
  return {
    setArgs(args) { box.querySelector(".args").textContent = json(args); },
    addRepair(repair) { box.querySelector(".repairs").append(el("div", { class: "repair" }, `repaired: ${JSON.stringify(repair)}`)); },
    setResult(status, value) {
      box.dataset.status = status;
      box.querySelector(".result").textContent = `${status}: ${typeof value === "string" ? value : json(value)}`;
    },
  };
}

// -- pauses -------------------------------------------------------------------------------------

function hidePending() {
  pending = null;
  show($("approval"), false);
  show($("clarification"), false);
}

function showPending(suspension) {
  // The same pause is reported twice (its event, and the run's response): keep what the user typed.
  if (suspension && pending && pending.suspension_id === suspension.suspension_id) return;
  hidePending();
  if (!suspension) return;
  pending = suspension;
  if (suspension.kind === "approval") {
    $("approval-message").textContent = suspension.message;
    $("approval-tool").textContent = suspension.tool;
    $("approval-args").value = json(suspension.arguments);
    $("approval-reason").value = "";
    show($("approval"), true);
  } else {
    $("clarification-text").textContent = suspension.message;
    const fields = suspension.fields.length ? suspension.fields : [{ name: "answer", description: "" }];
    $("clarification-fields").replaceChildren(...fields.map((field) => el("label", {},
      `${field.name}${field.description ? ` (${field.description})` : ""}`,
      el("input", { name: field.name, "data-testid": `field-${field.name}` }))));
    show($("clarification"), true);
  }
}

async function decide(decision) {
  const suspension = pending;
  hidePending();
  setStatus("running");
  const response = await api("POST", `/threads/${encodeURIComponent(current.id)}/resume`, {
    suspension_id: suspension.suspension_id, decision,
  });
  finished(response);
}

function approvalDecision(approved) {
  const decision = { approved, reason: $("approval-reason").value };
  if (!approved) return decision;
  let edited;
  try {
    edited = JSON.parse($("approval-args").value);
  } catch (err) {
    throw new Error("The arguments are not valid JSON; correct them or reject the call.");
  }
  if (JSON.stringify(edited) !== JSON.stringify(pending.arguments)) decision.modified_args = edited;
  return decision;
}

// -- running a query ----------------------------------------------------------------------------

async function ask(query) {
  if (!current) await openThread(newThreadId(), true);
  setStatus("running");
  $("answer").textContent = "";
  const response = await api("POST", `/threads/${encodeURIComponent(current.id)}/messages`, { query });
  finished(response);
}

function finished(response) {
  setStatus(response.status);
  if (response.status !== "suspended" && response.status !== "needs_input") $("answer").textContent = response.response;
  // A paused run's resumption reports only its own calls: the table adds up what this view has seen.
  for (const [phase, u] of Object.entries((response.usage && response.usage.phases) || {})) {
    const total = current.usage[phase] || { llm_calls: 0, prompt_tokens: 0, completion_tokens: 0 };
    for (const key of Object.keys(total)) total[key] += u[key] || 0;
    current.usage[phase] = total;
  }
  $("usage").tBodies[0].replaceChildren(...Object.entries(current.usage).map(([phase, u]) =>
    el("tr", {}, el("td", {}, phase), el("td", {}, String(u.llm_calls)),
      el("td", {}, String(u.prompt_tokens)), el("td", {}, String(u.completion_tokens)))));
  refreshThread().catch((err) => notice(err.message));
}

// -- wiring -------------------------------------------------------------------------------------

function guarded(handler) {
  return (event) => {
    event.preventDefault();
    notice("");
    Promise.resolve().then(() => handler(event)).catch((err) => notice(err.message));
  };
}

document.addEventListener("DOMContentLoaded", () => {
  $("sign-in").addEventListener("submit", guarded(() => signIn($("token").value.trim())));
  $("sign-out").addEventListener("click", () => signOut(""));
  $("new-thread").addEventListener("click", guarded(() => openThread(newThreadId(), true)));
  $("ask").addEventListener("submit", guarded(async () => {
    const query = $("query").value;
    $("query").value = "";
    await ask(query);
  }));
  $("approval").addEventListener("submit", guarded((event) => {
    const approved = !event.submitter || event.submitter.value === "approve";
    return decide(approvalDecision(approved));
  }));
  $("clarification").addEventListener("submit", guarded(() => {
    const values = {};
    for (const input of $("clarification-fields").querySelectorAll("input")) values[input.name] = input.value;
    return decide({ values });
  }));
  if (token) signIn(token);
  else show($("sign-in"), true);
});
