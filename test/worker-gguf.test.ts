// A real GGUF through the worker core (Dawn/SwiftShader): open llama.cpp gguf-py's peer file, list its
// tensors with the families that take them, run its Q4_K matrix through the int8 MMQ and the f16 twin and
// its expert bank through the MoE kernel, each against its oracle; bad files get a 'file' error.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../src/kernels';
import { CATALOG } from '../src/kernels/catalog';
import type { RunConfig } from '../src/kernels/family';
import { tensorConfig } from '../src/kernels/models';
import { modelActivation } from '../src/kernels/quant';
import { createGpuCore } from '../src/workers/core';
import type { OpenedModel, WorkerRequest, WorkerRequestBody, WorkerResponse } from '../src/workers/protocol';
import { goldenBytes, goldenF32 } from './golden';
import { getDawnGpu } from './gpu';

const messages: WorkerResponse[] = [];
const core = createGpuCore({
  gpu: getDawnGpu(),
  kernels: KERNELS,
  post: (msg, transfer) => messages.push(structuredClone(msg, { transfer })),
});
let nextId = 0;
async function send(req: Exclude<WorkerRequestBody, { type: 'cancel' }>): Promise<WorkerResponse[]> {
  const id = ++nextId;
  await core.handle({ ...req, id } as WorkerRequest);
  return messages.filter((m) => 'id' in m && m.id === id && m.type !== 'progress' && m.type !== 'ready');
}

const PEER = 'gguf/peer_default.gguf.gz';

async function open(file: Blob): Promise<OpenedModel> {
  const [r] = await send({ type: 'open-gguf', file });
  if (r?.type !== 'gguf-opened') throw new Error(JSON.stringify(r));
  return r.model;
}

const errorOf = (msgs: WorkerResponse[]) => {
  const e = msgs.find((m) => m.type === 'error');
  if (e?.type !== 'error')
    throw new Error(`expected an error, got ${JSON.stringify(msgs.map((m) => m.type))}`);
  return e;
};

function configFor(model: OpenedModel, kernel: string, tensor: string, rows: number): RunConfig {
  const family = CATALOG.get(kernel);
  const info = model.tensors.find((t) => t.name === tensor)!;
  const base: RunConfig = {
    kernel,
    arm: 'scalar',
    plane: 4,
    data: { source: 'tensor', seed: 3 },
    params: { ...family.defaults, [family.takes!.rows]: rows },
  };
  return tensorConfig(family, base, { file: model.file, tensor, activation: 'outliers' }, info);
}

describe('a GGUF through the worker core', () => {
  let model: OpenedModel;

  it('opens the gzip-compressed peer file and lists what each tensor runs on', async () => {
    model = await open(new File([goldenBytes(PEER)], 'peer_default.gguf.gz'));
    expect(model.file).toMatchObject({ name: 'peer_default.gguf.gz', size: goldenBytes(PEER).length });
    expect(model.file.headerHash).toMatch(/^[0-9a-f]{16}$/);
    expect(model.metadata.find((m) => m.key === 'general.architecture')?.value).toBe('"llama"');
    const byName = new Map(model.tensors.map((t) => [t.name, t]));
    const down = byName.get('blk.0.ffn_down.weight')!;
    expect(down.typeName).toBe('Q4_K');
    const runs = (t: typeof down) => t.kernels.filter((k) => !k.problems.length).map((k) => k.kernel);
    expect(runs(down)).toEqual(expect.arrayContaining(['mmq-q4k-rt', 'mmq-q4k-tile', 'coopmat-f16']));
    // n = 10: the fixed-tile kernel takes Q4_K but says why it cannot run this shape.
    expect(down.kernels.find((k) => k.kernel === 'mmq-q4k-blk')?.problems.join()).toMatch(/n = 10/);
    expect(runs(byName.get('blk.0.ffn_down_exps.weight')!)).toEqual(['moe-q4k-id']);
    const q4_0 = model.tensors.find((t) => t.typeName === 'Q4_0')!;
    expect(q4_0.note).toBe('not taken by these kernels (Q8_0, Q4_K)');
    expect(q4_0.kernels).toEqual([]);
  });

  it.each(['mmq-q4k-rt', 'coopmat-f16'])(
    'runs blk.0.ffn_down.weight through %s and matches its oracle, reading only that tensor',
    async (kernel) => {
      const msgs = await send({
        type: 'run',
        config: configFor(model, kernel, 'blk.0.ffn_down.weight', 16),
        instrument: false,
      });
      const r = msgs.find((m) => m.type === 'run-result');
      if (r?.type !== 'run-result') throw new Error(JSON.stringify(msgs));
      expect(r.outcome.verdict.pass).toBe(true);
      expect([r.outcome.rows, r.outcome.cols]).toEqual([16, 10]);
      // The tensor really is the weight: the split's f32 GEMM equals the activation times gguf-py's own
      // dequantization of the tensor (so the error split's "quantization" part is the weight's).
      const x = modelActivation(16, 512, 'outliers', 3);
      const w = goldenF32('gguf/peer_default.blk.0.ffn_down.weight.gguf_py_dequant.f32');
      const want = Array.from({ length: 160 }, (_, i) => {
        let acc = 0;
        for (let c = 0; c < 512; c++) acc += x[Math.floor(i / 10) * 512 + c]! * w[(i % 10) * 512 + c]!;
        return acc;
      });
      const full = r.outcome.fullPrecision!;
      const scale = Math.max(...want.map(Math.abs));
      expect(Math.max(...want.map((v, i) => Math.abs(v - full[i]!))) / scale).toBeLessThan(1e-5);
      // The tensor's 2,880 bytes (10 rows x 2 super-blocks x 144), read once: the next run reuses them.
      expect(r.outcome.tensorRead?.bytes).toBe((10 * 512 * 144) / 256);
    },
  );

  it('runs the expert bank through the MoE kernel with its expert count', async () => {
    const config = configFor(model, 'moe-q4k-id', 'blk.0.ffn_down_exps.weight', 8);
    expect(config.params).toMatchObject({ n: 8, k: 256, experts: 4, tokens: 8 });
    const msgs = await send({ type: 'run', config, instrument: false });
    const r = msgs.find((m) => m.type === 'run-result');
    if (r?.type !== 'run-result') throw new Error(JSON.stringify(msgs));
    expect(r.outcome.verdict.pass).toBe(true);
  });

  it("refuses a shape that is not the tensor's, a file that is not open, a type no kernel takes", async () => {
    const config = configFor(model, 'mmq-q4k-rt', 'blk.0.ffn_down.weight', 16);
    const wrongN = errorOf(
      await send({
        type: 'run',
        config: { ...config, params: { ...config.params, n: 16 } },
        instrument: false,
      }),
    );
    expect(wrongN.kind).toBe('shape');
    expect(wrongN.message).toContain('n = 16 but the tensor blk.0.ffn_down.weight has n = 10');
    const other = { ...config.data.tensor!, file: { ...model.file, headerHash: '0123456789abcdef' } };
    const closed = errorOf(
      await send({
        type: 'run',
        config: { ...config, data: { ...config.data, tensor: other } },
        instrument: false,
      }),
    );
    expect(closed.kind).toBe('file');
    expect(closed.message).toMatch(/not open here: open that file again/);
    const q4_0 = model.tensors.find((t) => t.typeName === 'Q4_0')!.name;
    const wrongType = errorOf(
      await send({
        type: 'run',
        config: { ...config, data: { ...config.data, tensor: { ...config.data.tensor!, tensor: q4_0 } } },
        instrument: false,
      }),
    );
    expect(wrongType.message).toMatch(/is Q4_0; .* takes Q4_K weights/);
  });

  it('answers a non-GGUF with a file error; a file cut in its last tensor keeps the others usable', async () => {
    const notGguf = errorOf(
      await send({ type: 'open-gguf', file: new File(['hello world, not a model'], 'notes.txt') }),
    );
    expect(notGguf.kind).toBe('file');
    expect(notGguf.message).toMatch(/not a GGUF file/);
    const { gunzipSync } = await import('node:zlib');
    const whole = gunzipSync(goldenBytes(PEER));
    const cut = await open(new File([whole.subarray(0, whole.length - 100)], 'cut.gguf'));
    const last = cut.tensors.reduce((a, b) => (b.offset > a.offset ? b : a));
    expect(last.note).toMatch(
      /^cut short: truncated GGUF: tensor '.*' needs bytes .* \(\d+ bytes missing\)$/,
    );
    expect(last.kernels).toEqual([]);
    expect(cut.tensors.filter((t) => t.note?.startsWith('cut short'))).toEqual([last]);
    expect(cut.tensors.find((t) => t.name === 'blk.0.ffn_down.weight')!.kernels.length).toBeGreaterThan(0);
  });
});
