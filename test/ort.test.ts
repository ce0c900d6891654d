// bench/ort.ts without a GPU: where it looks for ONNX Runtime and what it says when ORT is absent, broken or
// its WebGPU EP cannot start (stand-in packages written here), and the timing rule against a fake clock
// (the profile reader and the ratios: test/peers.test.ts). The last block runs ORT's CPU EP on the same
// models where ORT is installed (bench/install-ort.sh), and is skipped elsewhere (CI never installs it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  benchOrt,
  loadOrt,
  ORT_ABSENT_NOTE,
  ORT_VARIANTS,
  ortCandidates,
  ortCpuCheck,
  ortVariants,
  timeOrtRuns,
} from '../bench/ort';
import { skipBecause } from './skip';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-ort-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder laid out as bench/install-ort.sh lays one out, holding a stand-in onnxruntime-node. */
function fakeOrt(name: string, indexJs: string): string {
  const pkg = join(tmp, name, 'node_modules', 'onnxruntime-node');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'onnxruntime-node', version: '0.0.1-fake' }),
  );
  writeFileSync(join(pkg, 'index.js'), indexJs);
  return join(tmp, name);
}

const TENSOR = `exports.Tensor = class { constructor(type, data, dims) { this.type = type; this.data = data; this.dims = dims; this.location = 'cpu'; } dispose() {} };
exports.env = {};`;

describe('loading ONNX Runtime', () => {
  it('looks in $MMQ_ORT_DIR first, then bench/.ort', () => {
    const c = ortCandidates({ MMQ_ORT_DIR: '/x/ort' }, '/repo');
    expect(c[0]).toBe('/x/ort');
    expect(c[1]).toBe(resolve('/repo', 'bench/.ort'));
    expect(ortCandidates({}, '/repo')[0]).toBe(resolve('/repo', 'bench/.ort'));
  });

  it('absent: no rows, the note names the install script, and the bench carries on', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const r = await benchOrt([{ m: 32, n: 64, k: 256 }], { candidates: [empty] });
    expect(r.rows).toEqual([]);
    expect(r.note).toContain(ORT_ABSENT_NOTE);
    expect(r.note).toContain('bench/install-ort.sh');
  });

  it('present but not loadable, or not ORT: a note, not a crash', async () => {
    const broken = fakeOrt(
      'broken',
      `throw new Error('libonnxruntime.so.1: cannot open shared object file');`,
    );
    expect((loadOrt([broken]) as { note: string }).note).toMatch(/failed to load: .*libonnxruntime/);
    const other = fakeOrt('other', 'exports.x = 1;');
    expect((loadOrt([other]) as { note: string }).note).toMatch(/does not look like onnxruntime-node/);
  });

  it('no WebGPU EP, or an EP that cannot start: the note says what ORT said', async () => {
    const cpuOnly = fakeOrt(
      'cpuonly',
      `${TENSOR}\nexports.listSupportedBackends = () => [{ name: 'cpu' }];\nexports.InferenceSession = { create: async () => { throw new Error('unreachable'); } };`,
    );
    const a = await benchOrt([{ m: 32, n: 64, k: 256 }], { candidates: [cpuOnly] });
    expect(a.rows).toEqual([]);
    expect(a.note).toMatch(/no WebGPU EP here \(backends: cpu\)/);
    const noAdapter = fakeOrt(
      'noadapter',
      `${TENSOR}\nexports.listSupportedBackends = () => [{ name: 'cpu' }, { name: 'webgpu' }];\nexports.InferenceSession = { create: async () => { throw new Error('Failed to get a WebGPU adapter: No supported adapters'); } };`,
    );
    const b = await benchOrt([{ m: 32, n: 64, k: 256 }], { candidates: [noAdapter] });
    expect(b.rows).toEqual([]);
    expect(b.note).toMatch(/WebGPU EP could not start: Failed to get a WebGPU adapter/);
    expect(b.ort?.version).toBe('0.0.1-fake');
  });
});

describe('timing back-to-back runs', () => {
  it('warms up, sizes batches to targetMs, rotates on, and keeps the fastest batch (sync included)', async () => {
    // 0.5 ms a run and 2 ms a read-back on a fake clock.
    let t = 0;
    const seen: number[] = [];
    const run = async (i: number) => {
      seen.push(i);
      t += 0.5;
    };
    const sync = async () => {
      t += 2;
    };
    const opts = { reps: 3, targetMs: 25, warmMs: 150, maxIters: 1000, now: () => t };
    const r = await timeOrtRuns(run, sync, opts);
    // The warm-up's chunks are half a batch, so their read-back weighs twice as much: ~0.59 ms a run.
    expect(r.iters).toBeGreaterThanOrEqual(40);
    expect(r.iters).toBeLessThanOrEqual(50);
    expect(r.warmRuns).toBeGreaterThan(150 / 0.6);
    expect(r.samples).toHaveLength(3);
    // Indices count on across warm-up and batches (the caller's bank rotation).
    expect(seen).toEqual(seen.map((_, i) => i));
    expect(r.ms).toBeCloseTo(0.5 + 2 / r.iters, 9);
    // Batches that disagree by over 10% get as many again, and the fastest counts.
    // A slow phase from 200 to 260 ms on the clock (runs take 1 ms): after the warm-up, inside the batches.
    t = 0;
    const slow = await timeOrtRuns(
      async () => {
        t += t >= 200 && t < 260 ? 1 : 0.5;
      },
      sync,
      opts,
    );
    expect(slow.samples).toHaveLength(6);
    expect(Math.max(...slow.samples)).toBeGreaterThan(1.1 * slow.ms);
    expect(slow.ms).toBeCloseTo(0.5 + 2 / slow.iters, 9);
  });

  it("queues a batch's runs back to back: every run starts before the first one finishes", async () => {
    let t = 0;
    let inFlight = 0;
    let most = 0;
    const run = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      // ORT's binding answers in a later setImmediate: a run that awaits each call sees one in flight.
      await new Promise((done) => setImmediate(done));
      t += 1;
      inFlight--;
    };
    const r = await timeOrtRuns(run, async () => {}, {
      reps: 1,
      targetMs: 0,
      warmMs: 0,
      maxIters: 8,
      now: () => t,
    });
    expect(r.iters).toBe(8);
    expect(most).toBe(8);
  });

  it('targetMs <= 0: exactly maxIters runs a batch, no warm-up beyond the first estimate', async () => {
    let t = 0;
    const r = await timeOrtRuns(
      async () => {
        t += 1;
      },
      async () => {},
      { reps: 2, targetMs: 0, warmMs: 0, maxIters: 4, now: () => t },
    );
    expect(r.iters).toBe(4);
    expect(r.samples).toEqual([1, 1]);
  });
});

describe('ORT variants', () => {
  it('variants by name', () => {
    expect(ortVariants('f32-al4,f16').map((v) => v.accuracyLevel)).toEqual([4, 0]);
    expect(ortVariants('f32')[0]!.float).toBe('f32');
    expect(() => ortVariants('f64')).toThrow(/unknown ORT variant/);
  });
});

// ORT's own CPU MatMulNBits on the models and data the bench feeds its WebGPU EP: the model bytes, the f16
// conversions and the reference agree with ORT, and a corrupted reference is caught.
const installed = loadOrt(ortCandidates(process.env, process.cwd()));
describe('ONNX Runtime CPU EP (only where bench/install-ort.sh ran)', () => {
  it.for(ORT_VARIANTS.map((v) => [v.arm, v] as const))(
    '%s passes the check, and fails it corrupted',
    async ([, v], ctx) => {
      if ('note' in installed) return skipBecause(ctx, 'no-onnxruntime', installed.note);
      const ort = installed.ort;
      const shape = { m: 32, n: 64, k: 256 };
      expect((await ortCpuCheck(ort, shape, v)).pass).toBe(true);
      expect((await ortCpuCheck(ort, shape, v, { zeroPoints: true })).pass).toBe(true);
      const bad = await ortCpuCheck(ort, shape, v, {
        corruptReference: (w) => {
          w.scales[0] = 2 * w.scales[0]!;
        },
      });
      expect(bad.pass).toBe(false);
    },
  );
});
