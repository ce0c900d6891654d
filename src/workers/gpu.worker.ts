// The GPU web worker: a thin shell that hands every message to the pure core (./core.ts), which owns the
// GPUDevice. Results go back with their typed arrays transferred, not copied.
//
// Where WebGPU is missing the core answers 'unsupported'; the shell then still serves what needs no GPU,
// because the generators and oracles are pure TypeScript: a 'generate' gets the kernel as generated for
// the WebGPU spec's minimum adapter (with a note saying so), and 'oracle' (served here, any time) gets
// the CPU oracle's output. So the app shows the WGSL and the exact result even without a GPU.
/// <reference lib="webworker" />
import { KERNELS } from '../kernels';
import { ShapeError, type RunConfig } from '../kernels/family';
import { resolveConfig } from '../kernels/arms';
import type { AdapterCaps } from '../kernels/gpu/caps';
import { ORACLE_MAC_BUDGET } from '../kernels/tune/problem';
import { createGpuCore, generatedKernel } from './core';
import { withoutFeatures } from './runtime/hideFeatures';
import {
  kernelWithProblems,
  transferablesOf,
  type GeneratedKernel,
  type WorkerRequest,
  type WorkerResponse,
} from './protocol';
import { handleTuneRequest } from './tune/handler';

declare const self: DedicatedWorkerGlobalScope;

/**
 * The adapter every WebGPU implementation guarantees (the spec's default limits, no optional feature):
 * what a kernel is generated for when there is no adapter to ask.
 */
const PORTABLE_CAPS: AdapterCaps = {
  vendor: '',
  architecture: '',
  description: 'any WebGPU adapter (spec minimum limits, no optional features)',
  features: [],
  subgroups: false,
  subgroupMinSize: 0,
  subgroupMaxSize: 0,
  dot4I8Packed: false,
  shaderF16: false,
  timestampQuery: false,
  subgroupMatrixConfigs: [],
  limits: {
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupStorageSize: 16384,
    maxComputeWorkgroupSizeX: 256,
    maxComputeWorkgroupsPerDimension: 65535,
    maxStorageBufferBindingSize: 134217728,
    maxBufferSize: 268435456,
    maxStorageBuffersPerShaderStage: 8,
  },
};

/** The caps of the device the core opened, once it has (the oracle builds for them). */
let deviceCaps: AdapterCaps | undefined;
/** 'generate' requests in flight: answered from the CPU when the core finds no WebGPU. */
const generates = new Map<number, RunConfig>();

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The kernel of `config` generated without a device, for the portable adapter. */
function portableKernel(config: RunConfig, why: string): GeneratedKernel {
  const caps = PORTABLE_CAPS;
  const resolved = resolveConfig(config, caps);
  const note = `No GPU device (${why}): generated for ${caps.description}, plane width ${resolved.plane}.`;
  if (config.data.source === 'tensor')
    return {
      ...kernelWithProblems(
        [
          'a kernel over a model tensor is built from the tensor, which is read for a GPU run: WebGPU is needed',
        ],
        resolved.plane,
      ),
      note,
    };
  try {
    const family = KERNELS.get(config.kernel);
    const problems = family.validate(config, caps);
    if (problems.length) return { ...kernelWithProblems(problems, resolved.plane), note };
    return { ...generatedKernel(family.build(resolved, caps), resolved.plane), note };
  } catch (e) {
    return { ...kernelWithProblems(message(e).split('; '), resolved.plane), note };
  }
}

function post(msg: WorkerResponse, transfer: Transferable[]) {
  if (msg.type === 'ready') deviceCaps = msg.caps;
  if ('id' in msg && generates.has(msg.id)) {
    const config = generates.get(msg.id)!;
    generates.delete(msg.id);
    if (msg.type === 'error' && msg.kind === 'unsupported') {
      const reply: WorkerResponse = {
        type: 'generated',
        id: msg.id,
        kernel: portableKernel(config, msg.message),
      };
      self.postMessage(reply);
      return;
    }
  }
  self.postMessage(msg, transfer);
}

/** A config built on the CPU (no GPU involved) for the adapter at hand, or the portable one. */
function cpuProblem(config: RunConfig, what: string) {
  if (config.data.source === 'tensor')
    throw new ShapeError(`the ${what} of a model tensor needs the tensor, which a GPU run reads`);
  const family = KERNELS.get(config.kernel);
  const caps = deviceCaps ?? PORTABLE_CAPS;
  const problems = family.validate(config, caps);
  if (problems.length) throw new ShapeError(problems.join('; '));
  return family.build(resolveConfig(config, caps), caps);
}

/** Answer a CPU-only request, or its error (a 'shape' error when the config is what is wrong). */
function serveOnCpu(id: number, answer: () => WorkerResponse) {
  let msg: WorkerResponse;
  try {
    msg = answer();
  } catch (e) {
    msg = { type: 'error', id, kind: e instanceof ShapeError ? 'shape' : 'internal', message: message(e) };
  }
  self.postMessage(msg, transferablesOf(msg));
}

/** The CPU oracle of a config, within the oracle budget the tuner uses. */
function serveOracle(req: Extract<WorkerRequest, { type: 'oracle' }>) {
  serveOnCpu(req.id, () => {
    const b = cpuProblem(req.config, 'oracle');
    const macs = b.facts.ops / 2;
    if (macs > ORACLE_MAC_BUDGET)
      throw new ShapeError(
        `the CPU oracle of this shape is ${macs.toExponential(2)} multiply-adds, more than the ${ORACLE_MAC_BUDGET.toExponential(2)} computed here: choose a smaller shape`,
      );
    const oracle = b.facts.oracle().slice();
    return {
      type: 'oracle-result',
      id: req.id,
      rows: b.facts.rows,
      cols: b.facts.cols,
      oracle,
      gate: b.facts.gate,
    };
  });
}

/** The k-block breakdown of one output element (one element's work: no budget needed). */
function servePartials(req: Extract<WorkerRequest, { type: 'partials' }>) {
  serveOnCpu(req.id, () => {
    const { facts } = cpuProblem(req.config, 'k-block breakdown');
    if (req.row < 0 || req.row >= facts.rows || req.col < 0 || req.col >= facts.cols)
      throw new ShapeError(
        `element (${req.row}, ${req.col}) is outside the ${facts.rows}×${facts.cols} output`,
      );
    if (!facts.partials)
      return {
        type: 'partials-result',
        id: req.id,
        why: 'this family does not break its sum down by k-block',
      };
    return { type: 'partials-result', id: req.id, partials: facts.partials(req.row, req.col) };
  });
}

/**
 * Test builds only (vite --mode e2e): the worker's name may ask to hide adapter features, as Firefox or
 * Safari lack them ("mmq-gpu hide=subgroups,timestamp-query"), or WebGPU itself ("hide=webgpu").
 * Production builds drop this code (import.meta.env.MODE is a constant there).
 */
function testGpu(gpu: GPU | undefined): GPU | undefined {
  const hidden = /\bhide=([\w,-]+)/.exec(self.name)?.[1]?.split(',') ?? [];
  if (!gpu || !hidden.length) return gpu;
  if (hidden.includes('webgpu')) return undefined;
  return withoutFeatures(gpu, hidden);
}

const core = createGpuCore({
  gpu: import.meta.env.MODE === 'e2e' ? testGpu(navigator.gpu) : navigator.gpu,
  kernels: KERNELS,
  post,
  tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
});

self.addEventListener('message', (ev: MessageEvent<WorkerRequest>) => {
  const req = ev.data;
  if (req.type === 'oracle') return serveOracle(req);
  if (req.type === 'partials') return servePartials(req);
  if (req.type === 'generate') generates.set(req.id, req.config);
  void core.handle(req);
});
