#!/usr/bin/env node
// Browser test of `k3plan report`: renders the plan of three scenarios in headless Chromium, driven
// over the Chrome DevTools Protocol (a minimal WebSocket client below; Node built-ins only), and
// checks the page as a reader would see it:
//   - the HTML (and every --svg file) is well-formed XML (xmllint when installed, and the
//     browser's own XHTML parser; libxml2's HTML parser predates HTML5 tags, so it is not used);
//     no scripts or external assets;
//   - no console errors, exceptions or failed loads;
//   - every chart the JSON lists is on the page with a non-empty bounding box;
//   - no text leaves its chart's box and no two texts of a chart overlap;
//   - every number on the page (data-k) equals the JSON output of the same command at the shown
//     precision, and every tagged string (data-s) equals its JSON string;
//   - the page has no horizontal scroll at 1000 px and prints to PDF.
// A full-page screenshot of each report is written to OUT/report-<scenario>.png (and in grey, as
// Chromium's achromatopsia emulation renders it, to OUT/report-<scenario>-grey.png); with --docs DIR
// a smaller one (the top of the page) is written to DIR/report-<scenario>.png.
//
// usage: node browser_test.mjs --k3plan BIN --chromium BIN --out DIR [--xmllint BIN] [--docs DIR]
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const need of ['k3plan', 'chromium', 'out'])
  if (!args[need]) {
    console.error(`browser_test: --${need} is required`);
    process.exit(2);
  }
const xmllint = args.xmllint && !args.xmllint.endsWith('NOTFOUND') && fs.existsSync(args.xmllint) ? args.xmllint : null;

const SCENARIOS = [
  { name: 'kimi-k3-b300', args: ['-m', 'kimi-k3', '-g', 'b300', '-c', '128k', '-u', '32'] },
  { name: 'deepseek-v3-h200', args: ['-m', 'deepseek-v3', '-g', 'h200', '-c', '32k', '-u', '16'] },
  { name: 'llama-3.1-8b-h100', args: ['-m', 'llama-3.1-8b', '-g', 'h100', '-n', '1', '-c', '32k', '-u', '8'] },
];
const WIDTH = 1000;

let failures = 0;
function fail(scenario, msg) {
  failures++;
  console.log(`FAIL ${scenario}: ${msg}`);
}

// ------------------------------------------------------------------------------------------------
// A minimal WebSocket client (RFC 6455): text frames, fragmentation, ping/pong, close.
function connectWebSocket(url) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const key = crypto.randomBytes(16).toString('base64');
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
    });
    req.on('error', reject);
    req.on('response', (res) => reject(new Error(`WebSocket upgrade refused: HTTP ${res.statusCode}`)));
    req.on('upgrade', (res, socket, head) => {
      const expect = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
      if (res.headers['sec-websocket-accept'] !== expect) return reject(new Error('bad Sec-WebSocket-Accept'));
      socket.setNoDelay(true);
      const ws = { onmessage: () => {}, onclose: () => {} };
      let chunks = head && head.length ? [head] : [];
      let have = chunks.reduce((n, c) => n + c.length, 0);
      let fragments = [];
      const frame = (opcode, payload) => {
        const mask = crypto.randomBytes(4);
        const len = payload.length;
        const hdr = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
        hdr[0] = 0x80 | opcode;
        if (len < 126) hdr[1] = 0x80 | len;
        else if (len < 65536) {
          hdr[1] = 0x80 | 126;
          hdr.writeUInt16BE(len, 2);
        } else {
          hdr[1] = 0x80 | 127;
          hdr.writeBigUInt64BE(BigInt(len), 2);
        }
        const body = Buffer.alloc(len);
        for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
        socket.write(Buffer.concat([hdr, mask, body]));
      };
      ws.send = (text) => frame(0x1, Buffer.from(text, 'utf8'));
      ws.close = () => {
        try {
          frame(0x8, Buffer.alloc(0));
        } catch {}
        socket.end();
      };
      const pump = () => {
        for (;;) {
          if (have < 2) return;
          let buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          chunks = [buf];
          const b0 = buf[0], b1 = buf[1];
          let len = b1 & 0x7f, off = 2;
          if (len === 126) {
            if (have < 4) return;
            len = buf.readUInt16BE(2);
            off = 4;
          } else if (len === 127) {
            if (have < 10) return;
            len = Number(buf.readBigUInt64BE(2));
            off = 10;
          }
          if (b1 & 0x80) off += 4;  // servers do not mask; skip a key if one is there
          if (have < off + len) return;
          const payload = buf.subarray(off, off + len);
          chunks = [buf.subarray(off + len)];
          have -= off + len;
          const opcode = b0 & 0x0f, fin = (b0 & 0x80) !== 0;
          if (opcode === 0x9) frame(0xa, payload);
          else if (opcode === 0x8) {
            socket.end();
            return;
          } else if (opcode === 0x1 || opcode === 0x0) {
            fragments.push(Buffer.from(payload));
            if (fin) {
              const text = Buffer.concat(fragments).toString('utf8');
              fragments = [];
              ws.onmessage(text);
            }
          }
        }
      };
      socket.on('data', (d) => {
        chunks.push(d);
        have += d.length;
        pump();
      });
      socket.on('close', () => ws.onclose());
      socket.on('error', () => ws.onclose());
      resolve(ws);
      pump();
    });
    req.end();
  });
}

class Cdp {
  constructor(ws) {
    this.ws = ws;
    this.id = 0;
    this.pending = new Map();
    this.listeners = new Set();
    ws.onmessage = (text) => {
      const m = JSON.parse(text);
      if (m.id !== undefined && this.pending.has(m.id)) {
        const { resolve, reject, method } = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error) reject(new Error(`${method}: ${m.error.message}`));
        else resolve(m.result);
      } else if (m.method) {
        for (const l of this.listeners) l(m);
      }
    };
    ws.onclose = () => {
      for (const { reject, method } of this.pending.values()) reject(new Error(`${method}: connection closed`));
      this.pending.clear();
    };
  }
  send(method, params = {}, sessionId = undefined, timeoutMs = 60000) {
    const id = ++this.id;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: timed out`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
        method,
      });
      this.ws.send(JSON.stringify(msg));
    });
  }
  waitFor(method, sessionId, timeoutMs = 30000) {
    return new Promise((resolve, reject) => {
      const l = (m) => {
        if (m.method === method && m.sessionId === sessionId) {
          this.listeners.delete(l);
          clearTimeout(timer);
          resolve(m.params);
        }
      };
      const timer = setTimeout(() => {
        this.listeners.delete(l);
        reject(new Error(`${method}: not received`));
      }, timeoutMs);
      this.listeners.add(l);
    });
  }
}

function startChromium() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'k3plan-chromium-'));
  const proc = spawn(
    args.chromium,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
     `--user-data-dir=${profile}`, '--remote-debugging-port=0', '--hide-scrollbars', '--force-color-profile=srgb', 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`chromium did not start:\n${err}`)), 30000);
    proc.stderr.on('data', (d) => {
      err += d.toString();
      const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1], profile });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited (${code}):\n${err}`));
    });
  });
}

// ------------------------------------------------------------------------------------------------
// What the page shows, measured in the browser.
const PAGE_PROBE = `(() => {
  const out = { charts: [], nums: [], strs: [], scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
                active: document.querySelectorAll('script, link, img, iframe, object, embed, [src]').length };
  for (const fig of document.querySelectorAll('figure.chart')) {
    const svg = fig.querySelector('svg');
    if (!svg) { out.charts.push({ figId: fig.id, missing: true }); continue; }
    const r = svg.getBoundingClientRect();
    const c = { id: svg.getAttribute('data-chart'), figId: fig.id, w: r.width, h: r.height, texts: 0, outside: [], overlaps: [], empty: [] };
    const boxes = [];
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      c.texts++;
      const s = t.textContent;
      if (!s.trim() || b.width <= 0 || b.height <= 0) { c.empty.push(s); continue; }
      if (b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5)
        c.outside.push({ text: s, box: [b.left - r.left, b.top - r.top, b.right - r.left, b.bottom - r.top].map(v => Math.round(v * 10) / 10), svg: [r.width, r.height] });
      boxes.push({ s, b });
    }
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].b, b = boxes[j].b;
        const ix = Math.min(a.right, b.right) - Math.max(a.left, b.left), iy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (ix > 1 && iy > 1) c.overlaps.push([boxes[i].s, boxes[j].s, Math.round(ix), Math.round(iy)]);
      }
    out.charts.push(c);
  }
  for (const e of document.querySelectorAll('[data-k]'))
    out.nums.push({ k: e.getAttribute('data-k'), scale: Number(e.getAttribute('data-scale')), dp: Number(e.getAttribute('data-dp')), text: e.textContent });
  for (const e of document.querySelectorAll('[data-s]')) out.strs.push({ k: e.getAttribute('data-s'), text: e.textContent });
  return out;
})()`;

function lookup(obj, p) {
  for (const k of p.split('.')) {
    if (obj === null || obj === undefined) return undefined;
    obj = Array.isArray(obj) ? obj[Number(k)] : obj[k];
  }
  return obj;
}

async function checkScenario(cdp, sc) {
  const failuresBefore = failures;
  const dir = path.join(args.out, sc.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const html = path.join(dir, 'plan.html');
  const svgDir = path.join(dir, 'svg');
  const run = spawnSync(args.k3plan, ['report', ...sc.args, '-o', html, '--svg', svgDir, '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0) return fail(sc.name, `k3plan report exited ${run.status}: ${run.stderr}`);
  let data;
  try {
    data = JSON.parse(run.stdout);
  } catch (e) {
    return fail(sc.name, `JSON output does not parse: ${e.message}`);
  }
  const src = fs.readFileSync(html, 'utf8');

  // well-formed XML: the page and every chart file
  const svgs = fs.existsSync(svgDir) ? fs.readdirSync(svgDir).filter((f) => f.endsWith('.svg')).map((f) => path.join(svgDir, f)) : [];
  if (xmllint) {
    for (const f of [html, ...svgs]) {
      const x = spawnSync(xmllint, ['--noout', '--nonet', f], { encoding: 'utf8' });
      if (x.status !== 0) fail(sc.name, `xmllint: ${f} is not well-formed XML:\n${x.stderr}`);
    }
  }
  for (const id of data.charts || [])
    if (!svgs.some((f) => path.basename(f) === `${id}.svg`)) fail(sc.name, `--svg did not write ${id}.svg`);

  // the page in the browser
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  const errors = [];
  const listener = (m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === 'Runtime.exceptionThrown') errors.push(`exception: ${m.params.exceptionDetails.text}`);
    if (m.method === 'Runtime.consoleAPICalled' && (m.params.type === 'error' || m.params.type === 'assert'))
      errors.push(`console.${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(' ')}`);
    if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') errors.push(`log: ${m.params.entry.text} ${m.params.entry.url || ''}`);
    if (m.method === 'Network.loadingFailed') errors.push(`load failed: ${m.params.errorText}`);
  };
  cdp.listeners.add(listener);
  try {
    await cdp.send('Page.enable', {}, sessionId);
    await cdp.send('Runtime.enable', {}, sessionId);
    await cdp.send('Log.enable', {}, sessionId);
    await cdp.send('Network.enable', {}, sessionId);
    await cdp.send('Emulation.setDeviceMetricsOverride', { width: WIDTH, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
    const loaded = cdp.waitFor('Page.loadEventFired', sessionId);
    const nav = await cdp.send('Page.navigate', { url: 'file://' + path.resolve(html) }, sessionId);
    if (nav.errorText) fail(sc.name, `navigate: ${nav.errorText}`);
    await loaded;
    await cdp.send('Runtime.evaluate', { expression: 'document.fonts.ready.then(() => true)', awaitPromise: true }, sessionId);

    // XHTML: the browser's XML parser must accept the same bytes
    const xml = await cdp.send('Runtime.evaluate', {
      expression: `(() => { const d = new DOMParser().parseFromString(${JSON.stringify(src)}, 'application/xhtml+xml');
                     const e = d.getElementsByTagName('parsererror'); return e.length ? e[0].textContent : ''; })()`,
      returnByValue: true,
    }, sessionId);
    if (xml.result.value) fail(sc.name, `not well-formed XHTML: ${xml.result.value}`);

    const probe = (await cdp.send('Runtime.evaluate', { expression: PAGE_PROBE, returnByValue: true }, sessionId)).result.value;
    if (probe.active) fail(sc.name, `${probe.active} script/link/img/iframe/src elements: the page must be self-contained`);
    if (probe.scrollWidth > probe.innerWidth) fail(sc.name, `horizontal scroll: content ${probe.scrollWidth} px wide in a ${probe.innerWidth} px window`);

    // charts
    const expected = ['budget', 'kv', 'cost'];
    if (data.perf && data.perf.available) expected.push('pareto');
    for (const id of expected) if (!(data.charts || []).includes(id)) fail(sc.name, `the JSON does not list the ${id} chart`);
    let texts = 0;
    for (const id of data.charts || []) {
      const c = probe.charts.find((x) => x.id === id);
      if (!c) {
        fail(sc.name, `chart ${id} is not on the page`);
        continue;
      }
      if (!(c.w > 50 && c.h > 50)) fail(sc.name, `chart ${id}: bounding box ${c.w} x ${c.h}`);
      if (c.texts < 5) fail(sc.name, `chart ${id}: only ${c.texts} text elements`);
      for (const o of c.outside) fail(sc.name, `chart ${id}: text "${o.text}" at [${o.box}] leaves the ${o.svg[0]} x ${o.svg[1]} box`);
      for (const o of c.overlaps) fail(sc.name, `chart ${id}: texts "${o[0]}" and "${o[1]}" overlap by ${o[2]} x ${o[3]} px`);
      for (const e of c.empty) fail(sc.name, `chart ${id}: empty or invisible text "${e}"`);
      texts += c.texts;
    }

    // numbers and strings against the JSON
    let compared = 0;
    for (const n of probe.nums) {
      const v = lookup(data, n.k);
      if (typeof v !== 'number') {
        fail(sc.name, `page number ${n.k} = "${n.text}" has no number in the JSON`);
        continue;
      }
      const shown = Number(n.text.replace(/,/g, ''));
      const want = v / n.scale;
      const tol = 0.5 * Math.pow(10, -n.dp) * (1 + 1e-9) + Math.abs(want) * 1e-12;
      if (!Number.isFinite(shown) || Math.abs(shown - want) > tol) fail(sc.name, `page shows ${n.k} = ${n.text}, the JSON has ${v} (/${n.scale} = ${want})`);
      compared++;
    }
    for (const s of probe.strs) {
      const v = lookup(data, s.k);
      if (v !== s.text) fail(sc.name, `page shows ${s.k} = "${s.text.slice(0, 80)}", the JSON has ${JSON.stringify(v)?.slice(0, 80)}`);
      compared++;
    }
    const must = ['answer.gpus', 'answer.usd_per_month', 'answer.max_users', 'answer.kv_cache_tokens', 'kv.pool_bytes', 'cost.rent_usd_per_month'];
    for (const k of must) if (!probe.nums.some((n) => n.k === k)) fail(sc.name, `the page does not show ${k}`);
    if (probe.nums.length < 30) fail(sc.name, `only ${probe.nums.length} tagged numbers on the page`);

    // screenshots and print
    const metrics = await cdp.send('Page.getLayoutMetrics', {}, sessionId);
    const height = Math.ceil((metrics.cssContentSize || metrics.contentSize).height);
    await cdp.send('Emulation.setDeviceMetricsOverride', { width: WIDTH, height, deviceScaleFactor: 1, mobile: false }, sessionId);
    const shot = await cdp.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: WIDTH, height, scale: 1 } }, sessionId);
    const png = Buffer.from(shot.data, 'base64');
    fs.writeFileSync(path.join(args.out, `report-${sc.name}.png`), png);
    if (png.length < 10000) fail(sc.name, `screenshot only ${png.length} bytes`);
    if (args.docs) {
      // the top of the page (answer, memory chart, KV chart: up to the cost section) at 70%, small
      // enough to commit (< 300 KB)
      const costTop = (await cdp.send('Runtime.evaluate', { expression: "Math.floor(document.getElementById('cost').getBoundingClientRect().top + window.scrollY)", returnByValue: true }, sessionId)).result.value;
      const top = Math.min(height, Number.isFinite(costTop) ? costTop - 8 : 2600);
      const small = await cdp.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: WIDTH, height: top, scale: 0.7 } }, sessionId);
      fs.mkdirSync(args.docs, { recursive: true });
      fs.writeFileSync(path.join(args.docs, `report-${sc.name}.png`), Buffer.from(small.data, 'base64'));
    }
    // the same page as a reader without colour sees it (series must stay apart by dash and hatch)
    await cdp.send('Emulation.setEmulatedVisionDeficiency', { type: 'achromatopsia' }, sessionId);
    const grey = await cdp.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: WIDTH, height, scale: 0.6 } }, sessionId);
    fs.writeFileSync(path.join(args.out, `report-${sc.name}-grey.png`), Buffer.from(grey.data, 'base64'));
    await cdp.send('Emulation.setEmulatedVisionDeficiency', { type: 'none' }, sessionId);
    const pdf = await cdp.send('Page.printToPDF', { printBackground: true, preferCSSPageSize: false }, sessionId);
    if (!pdf.data || pdf.data.length < 10000) fail(sc.name, 'print to PDF produced nothing');

    if (errors.length) for (const e of errors) fail(sc.name, e);
    if (failures === failuresBefore)
      console.log(`ok   ${sc.name}: ${(data.charts || []).length} charts (${texts} texts), ${compared} numbers and strings equal the JSON, ${Math.round(png.length / 1024)} KiB screenshot, ${height} px tall`);
  } finally {
    cdp.listeners.delete(listener);
    await cdp.send('Target.closeTarget', { targetId }).catch(() => {});
  }
}

// ------------------------------------------------------------------------------------------------
const { proc, url, profile } = await startChromium();
let ws;
try {
  ws = await connectWebSocket(url);
  const cdp = new Cdp(ws);
  for (const sc of SCENARIOS) {
    try {
      await checkScenario(cdp, sc);
    } catch (e) {
      fail(sc.name, e.stack || String(e));
    }
  }
} catch (e) {
  fail('setup', e.stack || String(e));
} finally {
  if (ws) ws.close();
  const exited = new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once('exit', r)));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
  try {
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
  } catch {}
}
console.log(failures ? `browser_test: ${failures} failure(s)` : 'browser_test: all checks passed');
process.exit(failures ? 1 : 0);
