// Node's http as muxlab's peer for `reactor` and `offload`: the product one event loop per
// process stands for, serving muxlab's work the way a Node program would. Node's own modules
// only; bench starts it with Debian's nodejs, like nginx.
//
// Each request answers 200 with muxlab's body ("<html>hello</html>", text/html) after its work:
//
//   --work SPEC (as `muxlab serve --work`): cpu:D, sleep:D or cpu:D+sleep:D, where D is a fixed
//   time (200us) or exp(MEAN); a request's draws are cut at 10 s, CPU and call together. With
//   --from-request (as --work-from-request) a request's query names its own
//   (/?cpu=20us&sleep=exp(1ms)): one whose mean is over --max-work (muxlab's, 10ms by default)
//   is refused with 400, and its draws are cut there; a query that names none gets --work.
//
//   Without --worker-threads (beside `reactor`), the work runs on the event loop: cpu:D spins D
//   of the loop thread's own CPU time, and sleep:D blocks the loop with Atomics.wait, as a
//   synchronous call (fs.readFileSync, a native addon) blocks it: nothing else is served
//   meanwhile.
//
//   With --worker-threads N (beside `offload`), the loop parses and writes, and every request
//   with work hands it to a pool of N worker_threads through one queue (an idle worker takes the
//   next); the worker spins and blocks, and posts back; the loop answers.
//
//   Node has no clock of one thread's CPU time (muxlab's workers read CLOCK_THREAD_CPUTIME_ID):
//   a spin counts the time since it began less what the thread waited on a run queue meanwhile
//   (/proc/thread-self/schedstat), which differs from that clock only by the interrupts and
//   steal the spin sat through. Draws come from one generator seeded by --seed, on the loop.
//
// SIGTERM ends it with status 0. It prints nothing while it serves; bench knows it is up when
// it accepts a connection.
'use strict';

const fs = require('fs');
const http = require('http');
const { Worker, isMainThread, parentPort } = require('worker_threads');

const CEILING_NS = 10e9;
const BODY = Buffer.from('<html>hello</html>');

/** A seeded generator of uniform draws in (0, 1) (mulberry32). */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
}

/** muxlab's durations, in ns: a number and ns, us, µs, ms, s (or none), m or h. */
function parseDuration(s) {
  const m = /^([0-9.]+)(ns|us|µs|ms|s|m|h|)$/.exec(s.trim());
  const unit = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, '': 1e9, s: 1e9, m: 60e9, h: 3600e9 };
  if (!m || isNaN(Number(m[1]))) throw new Error(`'${s}' is not a duration: write e.g. 200us, 5ms, 1.5s`);
  return Number(m[1]) * unit[m[2]];
}

/** D: a fixed time or exp(MEAN), in ns; other distributions are refused. */
function parseDist(s) {
  s = s.trim();
  const e = /^exp\((.*)\)$/.exec(s);
  if (e) {
    const mean = parseDuration(e[1]);
    if (!(mean > 0)) throw new Error(`'${s}': a mean must be more than zero`);
    return { mean, exp: true };
  }
  if (s.includes('(')) throw new Error(`'${s}': this server draws fixed times and exp(MEAN) only`);
  return { mean: parseDuration(s), exp: false };
}

/** `none`, cpu:D, sleep:D or cpu:D+sleep:D. */
function parseWork(s) {
  const w = { cpu: null, sleep: null };
  if (!s || s === 'none') return w;
  for (const part of s.split('+')) {
    const i = part.indexOf(':');
    const kind = part.slice(0, i);
    if (i < 0 || (kind !== 'cpu' && kind !== 'sleep')) throw new Error(`'${part}': write cpu:D, sleep:D or cpu:D+sleep:D`);
    w[kind] = parseDist(part.slice(i + 1));
  }
  return w;
}

/** One draw of `d` (ns). */
function draw(d, uniform) {
  if (!d) return 0;
  if (!d.exp) return d.mean;
  return -d.mean * Math.log(uniform());
}

/** A request's CPU and call (ns), together cut at `limit` (the call cut first). */
function drawWork(w, uniform, limit) {
  const cpu = Math.min(draw(w.cpu, uniform), limit);
  const sleep = Math.min(draw(w.sleep, uniform), limit - cpu);
  return [cpu, sleep];
}

/** A work's mean (ns), CPU and call together. */
const meanOf = (w) => (w.cpu ? w.cpu.mean : 0) + (w.sleep ? w.sleep.mean : 0);

/** The work a request's query names (`null`: none), or throws why it is refused. */
function queryWork(url) {
  const q = new URL(url, 'http://x').searchParams;
  const parts = ['cpu', 'sleep'].filter((k) => q.get(k)).map((k) => `${k}:${q.get(k)}`);
  return parts.length ? parseWork(parts.join('+')) : null;
}

/**
 * Spins and blocks for a drawn (cpu, sleep) pair, in ns, on the calling thread. The CPU the
 * thread used since the spin began is the time since then less the time it waited on a run
 * queue meanwhile: /proc/thread-self/schedstat's second field, which the kernel brings up to
 * date whenever the thread is put back on a CPU (its first field, the time on the CPU, is
 * brought up to date only at the scheduler's tick or a switch, so read by the running thread
 * it lags by up to a tick).
 */
function performer() {
  const fd = fs.openSync('/proc/thread-self/schedstat', 'r');
  const buf = Buffer.alloc(128);
  const waited = () => {
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return Number(buf.toString('latin1', 0, n).split(' ')[1]);
  };
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return (cpu, sleep) => {
    if (cpu > 0) {
      const t0 = process.hrtime.bigint();
      const w0 = waited();
      while (Number(process.hrtime.bigint() - t0) - (waited() - w0) < cpu);
    }
    if (sleep > 0) Atomics.wait(cell, 0, 0, sleep / 1e6);
  };
}

function worker() {
  const perform = performer();
  parentPort.on('message', ([id, cpu, sleep]) => {
    perform(cpu, sleep);
    parentPort.postMessage(id);
  });
}

function main() {
  const args = process.argv.slice(2);
  const opt = { addr: '127.0.0.1:8080', work: 'none', 'from-request': false, seed: 1, 'worker-threads': 0, 'max-work': '10ms' };
  for (let i = 0; i < args.length; i++) {
    const k = args[i].replace(/^--/, '');
    if (!(k in opt)) fail(`unknown flag ${args[i]}: the flags are --addr, --work, --from-request, --max-work, --seed, --worker-threads`);
    if (k === 'from-request') opt[k] = true;
    else opt[k] = args[++i];
  }
  let every;
  let limit;
  try {
    every = parseWork(opt.work);
    limit = parseDuration(String(opt['max-work']));
  } catch (e) {
    fail(e.message);
  }
  if (!(limit > 0)) fail(`--max-work ${opt['max-work']}: a duration over zero`);
  const threads = Number(opt['worker-threads']);
  if (!Number.isInteger(threads) || threads < 0 || threads > 64) fail(`--worker-threads ${opt['worker-threads']}: 0 to 64`);
  const uniform = generator(Number(opt.seed));

  // Where a request's work runs: on the loop, or on the pool through one queue.
  let run;
  if (threads === 0) {
    const perform = performer();
    run = (cpu, sleep, done) => {
      perform(cpu, sleep);
      done();
    };
  } else {
    const idle = [];
    const queue = [];
    const waiting = new Map();
    let next = 0;
    const give = (w) => {
      const job = queue.shift();
      if (job) {
        waiting.set(job[0], job[3]);
        w.postMessage(job.slice(0, 3));
      } else idle.push(w);
    };
    for (let i = 0; i < threads; i++) {
      const w = new Worker(__filename);
      w.on('message', (id) => {
        const done = waiting.get(id);
        waiting.delete(id);
        give(w);
        done();
      });
      w.on('error', (e) => fail(`a worker thread failed: ${e.message}`));
      idle.push(w);
    }
    run = (cpu, sleep, done) => {
      queue.push([next++, cpu, sleep, done]);
      const w = idle.shift();
      if (w) give(w);
    };
  }

  const server = http.createServer((req, res) => {
    let w = every;
    let cut = CEILING_NS;
    if (opt['from-request']) {
      try {
        const named = queryWork(req.url);
        if (named && meanOf(named) > limit) throw new Error(`'${req.url}' costs more than --max-work ${opt['max-work']} on average`);
        if (named) [w, cut] = [named, limit];
      } catch (e) {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end(e.message + '\n');
        return;
      }
    }
    const answer = () => {
      res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': BODY.length });
      res.end(BODY);
    };
    const [cpu, sleep] = drawWork(w, uniform, cut);
    if (cpu > 0 || sleep > 0) run(cpu, sleep, answer);
    else answer();
  });
  // Keep-alive connections stay open as long as the client keeps them (muxlab's models do).
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  const i = opt.addr.lastIndexOf(':');
  server.listen({ host: opt.addr.slice(0, i), port: Number(opt.addr.slice(i + 1)), backlog: 1024 });
  server.on('error', (e) => fail(e.message));
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}

function fail(msg) {
  process.stderr.write(`node-http: ${msg}\n`);
  process.exit(2);
}

if (isMainThread) main();
else worker();
