// Framework-time benchmark of the ORIGINAL TypeScript ART PESAgent (art-framework 0.4.16, built
// unmodified from source with its own tsup config) on scenario S1.
// Usage: ART_DIST=<built art/dist/index.js> node bench.mjs <nTools: 2|200> [warmup=200] [runs=2000]
// (run.sh builds ART and sets ART_DIST; the scenario and catalogue are this repo's test fixtures)
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
if (!process.env.ART_DIST) {
  console.error('ART_DIST is not set: pass the absolute path of a built art/dist/index.js (run.sh builds it and sets it)');
  process.exit(2);
}
const { createArtInstance, InMemoryStorageAdapter } = await import(process.env.ART_DIST);

const N_TOOLS = Number(process.argv[2] ?? 2);
const WARMUP = Number(process.argv[3] ?? 200);
const RUNS = Number(process.argv[4] ?? 2000);
// Optional (off by default): empty the memory store every N runs, outside the timed part, like the
// Python benchmark does. The brief's numbers use 0 (the store keeps all 2200 threads).
const CLEAR_EVERY = Number(process.env.CLEAR_EVERY ?? 0);
// ART's Logger is left at its default (INFO): it prints nothing per run. StateManager prints one raw
// console.warn per run (explicit saving strategy) to stderr: left as is; run.sh sends stderr to a file.

const S1 = JSON.parse(readFileSync(new URL('../../tests/fixtures/scenarios/S1.json', import.meta.url), 'utf8'));
const REPLIES = S1.scriptedResponses; // in call order: planning, step_1 x2, step_2 x2, synthesis
const CATALOG = JSON.parse(readFileSync(new URL('../../tests/fixtures/catalogs/catalog_N200.json', import.meta.url), 'utf8')).tools;

// ---- scripted provider adapter: a fresh script per run; answers instantly --------------------------
let script = null; // { i, mismatches }
const TOKEN_TYPE = { PLANNING_THOUGHTS: ['planning', 'PLANNING_LLM_RESPONSE'],
  EXECUTION_THOUGHTS: ['execution', 'EXECUTION_LLM_RESPONSE'],
  SYNTHESIS_THOUGHTS: ['synthesis', 'SYNTHESIS_LLM_RESPONSE'] }; // = getStreamTokenContext(ctx, false)

class ScriptedAdapter {
  constructor(_options) { this.providerName = 'scripted'; }
  async call(_prompt, options) {
    const r = REPLIES[script.i++];
    if (!r) { script.mismatches.push('ran out of replies'); throw new Error('script exhausted'); }
    const stepId = options.stepContext?.stepId ?? null;
    if (r.expectCallContext !== options.callContext || (r.expectStepId ?? null) !== stepId)
      script.mismatches.push(`reply ${r.index}: got ${options.callContext}/${stepId}`);
    const [phase, tokenType] = TOKEN_TYPE[options.callContext] ?? [undefined, 'LLM_RESPONSE'];
    const { threadId, traceId, sessionId } = options;
    const base = { threadId, traceId, sessionId, phase,
      ...(options.stepContext && { stepId, stepDescription: options.stepContext.stepDescription }) };
    // Same shape as the adapter used to record S1: one TOKEN with the whole text, METADATA, END.
    return (async function* () {
      yield { type: 'TOKEN', data: r.text, tokenType, timestamp: Date.now(), ...base };
      yield { type: 'METADATA', data: { stopReason: 'stop', inputTokens: 0, outputTokens: 0, traceId, threadId }, timestamp: Date.now(), ...base };
      yield { type: 'END', data: null, timestamp: Date.now(), ...base };
    })();
  }
}

// ---- tools: S1's recorded outputs, async and instant; catalogue extras must never run -------------
let toolLog = [];
const recorded = new Map(S1.toolOutputs.map(t => [t.tool + ' ' + JSON.stringify(t.arguments), t]));
function makeTool(schema) {
  return {
    schema,
    async execute(input, context) {
      const rec = recorded.get(schema.name + ' ' + JSON.stringify(input));
      toolLog.push({ tool: schema.name, ok: !!rec });
      if (!rec) return { callId: context?.callId ?? 'x', toolName: schema.name, status: 'error', error: `unexpected call ${schema.name}` };
      return { callId: rec.callId, toolName: schema.name, status: rec.status, output: rec.output };
    },
  };
}
const schemas = N_TOOLS === 2 ? S1.toolCatalog : CATALOG.slice(0, N_TOOLS);
if (schemas[0].name !== 'webSearch' || schemas[1].name !== 'webExtract') throw new Error('catalogue order');
const tools = schemas.map(makeTool);
const enabledTools = schemas.map(s => s.name);

// ---- one ART instance -----------------------------------------------------------------------------
const storage = new InMemoryStorageAdapter(); // = what storage:{type:'memory'} builds; kept to report its size
const art = await createArtInstance({
  storage,
  providers: { availableProviders: [{ name: 'scripted', adapter: ScriptedAdapter }] },
  tools,
});
const providerConfig = { providerName: 'scripted', modelId: 'scripted-model', adapterOptions: {} };

let peakRss = process.memoryUsage().rss;
const MUST = ['<mainContent>', '1. Early galaxies formed faster than models predicted.', '</mainContent>'];

async function oneRun(threadId) {
  // per-thread setup required by ART (loadThreadContext throws without it): NOT timed
  await art.stateManager.setThreadConfig(threadId, { providerConfig, enabledTools, historyLimit: 20 });
  script = { i: 0, mismatches: [] };
  toolLog = [];
  const props = { query: S1.userQuery, threadId, userId: 'user_1', sessionId: 'session_1' };
  const t0 = performance.now();
  const res = await art.process(props);
  const ms = performance.now() - t0;
  // ---- verification (not timed) ----
  const errs = [];
  const md = res?.metadata ?? {};
  if (md.status !== 'success') errs.push(`status ${md.status} ${md.error ?? ''}`);
  const answer = res?.response?.content ?? '';
  for (const s of MUST) if (!answer.includes(s)) errs.push(`answer lacks ${JSON.stringify(s)}`);
  if (toolLog.length !== 2 || toolLog[0].tool !== 'webSearch' || toolLog[1].tool !== 'webExtract' || !toolLog.every(t => t.ok))
    errs.push(`tool calls ${JSON.stringify(toolLog)}`);
  if (script.i !== REPLIES.length) errs.push(`${script.i} model calls`);
  if (md.llmCalls !== 6 || md.toolCalls !== 2) errs.push(`metadata llmCalls ${md.llmCalls} toolCalls ${md.toolCalls}`);
  errs.push(...script.mismatches);
  const ctx = await art.stateManager.loadThreadContext(threadId);
  const items = ctx?.state?.data?.todoList ?? [];
  if (items.length !== 2 || !items.every(it => it.status === 'completed')) errs.push(`items ${items.map(i => i.id + ':' + i.status)}`);
  const rss = process.memoryUsage().rss;
  if (rss > peakRss) peakRss = rss;
  return { ms, errs };
}

let firstErr = null;
for (let i = 0; i < WARMUP; i++) {
  if (CLEAR_EVERY && i % CLEAR_EVERY === 0) await storage.clearAll();
  const r = await oneRun(`warm-${i}`);
  if (r.errs.length && !firstErr) firstErr = r.errs;
}
const rssAfterWarmup = process.memoryUsage().rss;
const times = [];
let failures = 0;
for (let i = 0; i < RUNS; i++) {
  if (CLEAR_EVERY && i % CLEAR_EVERY === 0) await storage.clearAll();
  const r = await oneRun(`run-${i}`);
  if (r.errs.length) { failures++; if (!firstErr) firstErr = r.errs; }
  times.push(r.ms);
}
const rssEnd = process.memoryUsage().rss;
const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const med = a => { const b = [...a].sort((x, y) => x - y); return b.length % 2 ? b[(b.length - 1) / 2] : (b[b.length / 2 - 1] + b[b.length / 2]) / 2; };
const first200 = med(times.slice(0, 200)), last200 = med(times.slice(-200));
times.sort((a, b) => a - b);
const q = p => times[Math.min(times.length - 1, Math.floor(p * times.length))];
const median = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
const sizes = {};
for (const [name, m] of storage.storage) sizes[name] = m.size;
const out = {
  config: `${N_TOOLS} tools`, runs: RUNS, warmup: WARMUP, failures, firstError: firstErr,
  medianMs: median, p90Ms: q(0.9), p10Ms: q(0.1), meanMs: times.reduce((a, b) => a + b, 0) / times.length,
  peakRssMb: Math.max(peakRss / 2 ** 20, hwm), rssAfterWarmupMb: rssAfterWarmup / 2 ** 20, rssEndMb: rssEnd / 2 ** 20,
  storeSizes: sizes, storeJsonMb: JSON.stringify([...storage.storage].map(([k, m]) => [k, [...m]])).length / 2 ** 20,
  medianFirst200Ms: first200, medianLast200Ms: last200, clearEvery: CLEAR_EVERY, node: process.version,
};
if (globalThis.gc) { globalThis.gc(); out.heapUsedAfterGcMb = process.memoryUsage().heapUsed / 2 ** 20; }
console.log('RESULT ' + JSON.stringify(out));
process.exit(0); // ProviderManager keeps a 300 s idle timer per adapter instance
