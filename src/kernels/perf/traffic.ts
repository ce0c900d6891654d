// Bytes each pass of a plan moves, read off the plan itself (its buffers and each pass's bindings), so
// every family -- and every family added later -- declares its traffic by declaring its plan. The model
// is the compulsory traffic of a roofline: each buffer a pass binds is moved once by that pass, whole.
// A buffer with initial contents is an input (read); a storage buffer without contents is written by the
// first pass that binds it and read by every later pass that binds it (a prepass's f16 tiles, split-K
// part sums, a routing table); uniforms are a few bytes of parameters and are left out. Re-reads that
// caches serve (a tile re-reading its weight rows) are not memory traffic and are not counted.
import { bufferBytes, type BufferSpec, type KernelPlan } from '../gpu/plan';
import { GRID_SLICE_BINDING } from '../gpu/gridSlice';

/** What a buffer is to the op: its weights, its other inputs (activations, index tables), its result, or a buffer between passes. */
export type TrafficRole = 'weight' | 'activation' | 'output' | 'intermediate';

/** One buffer as one pass moves it. */
export interface BufferTraffic {
  buffer: string;
  role: TrafficRole;
  access: 'read' | 'write';
  bytes: number;
}

/** The traffic and work of one pass. */
export interface PassTraffic {
  label: string;
  /** Bytes read, by every bound input and intermediate written earlier. */
  readBytes: number;
  /** Bytes written (the output, the intermediates this pass makes). */
  writeBytes: number;
  /** readBytes + writeBytes. */
  bytes: number;
  /** Operations (multiply-adds x 2) the pass performs: the plan's main pass carries the op's; the others convert or route. */
  ops: number;
  buffers: BufferTraffic[];
}

/** Bytes per role over passes, and their sum. */
export type RoleBytes = Record<TrafficRole, number>;

const roleOf = (b: BufferSpec, output: string): TrafficRole =>
  b.name === output ? 'output' : b.role === 'weight' ? 'weight' : b.data ? 'activation' : 'intermediate';

/**
 * The traffic of every pass of `plan`, in dispatch order; `ops` (ProblemFacts.ops) is credited to the
 * plan's main pass. Throws RangeError when a pass binds a buffer the plan does not have.
 * @example planTraffic(built.plan, built.facts.ops).map((p) => p.bytes)
 */
export function planTraffic(plan: KernelPlan, ops: number): PassTraffic[] {
  const specs = new Map(plan.buffers.map((b) => [b.name, b]));
  const written = new Set<string>();
  return plan.passes.map((pass, i) => {
    const buffers: BufferTraffic[] = [];
    for (const name of new Set(pass.bindings)) {
      if (name === GRID_SLICE_BINDING) continue; // the runner's 32-byte uniform
      const b = specs.get(name);
      if (!b) throw new RangeError(`${pass.label} binds ${name}, which the plan does not have`);
      if (b.kind === 'uniform') continue;
      const role = roleOf(b, plan.output);
      const made = role === 'output' || role === 'intermediate';
      const access = made && !written.has(name) ? 'write' : 'read';
      // Stryker disable next-line ConditionalExpression: a buffer read here is an input (never made) or made already
      if (access === 'write') written.add(name);
      buffers.push({ buffer: name, role, access, bytes: bufferBytes(b) });
    }
    const sum = (a: 'read' | 'write') =>
      buffers.filter((b) => b.access === a).reduce((s, b) => s + b.bytes, 0);
    const readBytes = sum('read');
    const writeBytes = sum('write');
    return {
      label: pass.label,
      readBytes,
      writeBytes,
      bytes: readBytes + writeBytes,
      ops: i === plan.mainPass ? ops : 0,
      buffers,
    };
  });
}

/**
 * The whole plan's traffic: bytes and ops over its passes, and bytes per role.
 * @example const t = totalTraffic(planTraffic(plan, ops)); t.bytes / (ms * 1e6) // GB/s
 */
export function totalTraffic(passes: readonly PassTraffic[]): {
  bytes: number;
  readBytes: number;
  writeBytes: number;
  ops: number;
  byRole: RoleBytes;
} {
  const byRole: RoleBytes = { weight: 0, activation: 0, output: 0, intermediate: 0 };
  let readBytes = 0;
  let writeBytes = 0;
  let ops = 0;
  for (const p of passes) {
    readBytes += p.readBytes;
    writeBytes += p.writeBytes;
    ops += p.ops;
    for (const b of p.buffers) byRole[b.role] += b.bytes;
  }
  return { bytes: readBytes + writeBytes, readBytes, writeBytes, ops, byRole };
}
