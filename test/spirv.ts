// What reaches the driver's compiler: the SPIR-V Dawn's Vulkan backend generates for a plan, captured with
// Dawn's `dump_shaders` toggle (in a child process: test/spirvDumpChild.ts says why), and a data-flow
// witness on it: which float adds and subtracts take a product straight from a multiply, so that a driver
// may contract the pair into one FMA (WGSL allows it; NVIDIA's compiler does it, SwiftShader's does not).
// The int8 kernels' no_fuse (docs/decisions/0002-no-fuse.md) exists to leave no such pair in their epilogue.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FamilyParams } from '../src/kernels/family';
import { runProcess } from './cliProcess';

/** One plan to compile: a family's defaults with `params` merged, on `arm`, WGSL text replaced if asked. */
export interface SpirvJob {
  id: string;
  family: string;
  arm: string;
  params?: FamilyParams;
  /** [from, to] text replacements applied to every pass's WGSL before it is compiled (mutants). */
  replace?: [string, string][];
}

/** A pass the child compiled: its job, index, label and the exact WGSL handed to Dawn. */
export interface SpirvManifestEntry {
  job: string;
  pass: number;
  label: string;
  wgsl: string;
}

/** A compiled pass with the SPIR-V disassembly (one per pipeline Dawn built from that WGSL). */
export interface CompiledPass extends SpirvManifestEntry {
  spirv: string[];
}

// ------------------------------------------------------------------------------------------ the dump

/**
 * Split what the `webgpu` package printed into (WGSL, SPIR-V...) pairs: each message starts with a line
 * `info:` (the logging type), and a SPIR-V dump belongs to the WGSL dump before it.
 * @example parseShaderDump(stdout) // [{ wgsl: '@group(0) ...', spirv: ['; SPIR-V ...'] }]
 */
export function parseShaderDump(out: string): { wgsl: string; spirv: string[] }[] {
  const modules: { wgsl: string; spirv: string[] }[] = [];
  for (const msg of out.split(/^(?:info|warning|error|verbose):\n/m)) {
    if (msg.startsWith('// Dumped WGSL:\n')) modules.push({ wgsl: msg.slice(16), spirv: [] });
    else if (msg.startsWith('/* Dumped SPIRV disassembly */\n')) {
      const last = modules.at(-1);
      if (!last) throw new Error('a SPIR-V dump before any WGSL dump');
      last.spirv.push(msg.slice(31));
    }
  }
  return modules;
}

/** The child's limit: under the test's own timeout (vitest.config.ts), so a hang fails with this message. */
const SPIRV_TIMEOUT_MS = 100_000;

/**
 * Compile `jobs` in a child Node (Dawn on the VK_ICD_FILENAMES driver, SwiftShader in CI) with
 * dump_shaders, and return every pass with the SPIR-V Dawn generated for it. A pass whose WGSL another
 * pass already compiled shares that pass's dump (Dawn and the runner compile a text once).
 * @example const passes = await compileToSpirv([{ id: 'q4k', family: 'mmq-q4k-rt', arm: 'scalar' }]);
 */
export async function compileToSpirv(jobs: readonly SpirvJob[]): Promise<CompiledPass[]> {
  const dir = mkdtempSync(join(tmpdir(), 'spirv-'));
  try {
    const jobsPath = join(dir, 'jobs.json');
    const manifestPath = join(dir, 'manifest.json');
    writeFileSync(jobsPath, JSON.stringify(jobs));
    const child = await runProcess(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'spirvDumpChild.ts'), jobsPath, manifestPath],
      { timeoutMs: SPIRV_TIMEOUT_MS },
    );
    if (child.status !== 0)
      throw new Error(`spirvDumpChild exited ${child.status}: ${child.stderr.slice(-4000)}`);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as SpirvManifestEntry[];
    const byWgsl = new Map<string, string[]>();
    for (const m of parseShaderDump(child.stdout)) {
      const key = m.wgsl.trim();
      byWgsl.set(key, [...(byWgsl.get(key) ?? []), ...m.spirv]);
    }
    return manifest.map((e) => {
      const spirv = byWgsl.get(e.wgsl.trim());
      if (!spirv?.length)
        throw new Error(`no SPIR-V dump for ${e.job} pass ${e.pass} (${e.label}); is dump_shaders on?`);
      return { ...e, spirv };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------- the witness

interface Inst {
  id?: string;
  op: string;
  args: string[];
  fn?: string;
}

/** Parse disassembly lines (`%r = OpX %t %a ...` / `OpX %a ...`); string literals become one token. */
function parseSpirv(text: string): Inst[] {
  const out: Inst[] = [];
  let fn: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith(';')) continue;
    const tokens = line.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
    let id: string | undefined;
    if (tokens[1] === '=') {
      id = tokens[0];
      tokens.splice(0, 2);
    }
    const op = tokens.shift();
    if (!op) continue;
    if (op === 'OpFunction') fn = id;
    out.push({ ...(id ? { id } : {}), op, args: tokens, ...(fn ? { fn } : {}) });
    if (op === 'OpFunctionEnd') fn = undefined;
  }
  return out;
}

/** A float add or subtract that takes one operand straight from a multiply (through value-preserving ops). */
export interface Contractible {
  /** The function it is in (its OpName where the SPIR-V keeps names). */
  fn: string;
  add: string;
  mul: string;
  /** The add, the multiply, and the path between (ops the operand passed through). */
  text: string;
}

const PRODUCTS = new Set(['OpFMul', 'OpVectorTimesScalar']);

/**
 * Every place in a SPIR-V module where a driver may contract a multiply into the add or subtract that
 * uses it: an OpFAdd / OpFSub operand that is an OpFMul (or OpFNegate of one) once value-preserving steps
 * are looked through -- copies, bitcasts, integer ops with a provably zero operand (a literal 0, or a
 * variable only ever set to 0), and calls of functions that return their parameter or a product. An
 * explicit GLSL.std.450 Fma counts too. `no_fuse`'s OR with a run-time zero is not provably zero, so a
 * product behind it is not contractible; `return x;` is looked through.
 * @example contractibleAdds(spirv) // [] for every int8 MMQ kernel
 */
export function contractibleAdds(spirv: string): Contractible[] {
  const insts = parseSpirv(spirv);
  const def = new Map<string, Inst>();
  const names = new Map<string, string>();
  const params = new Map<string, { fn: string; index: number }>();
  const returns = new Map<string, string[]>();
  const stores = new Map<string, string[]>();
  const counters = new Map<string, number>();
  for (const i of insts) {
    if (i.id) def.set(i.id, i);
    if (i.op === 'OpName' && i.args[0] && i.args[1]) names.set(i.args[0], i.args[1].replace(/"/g, ''));
    if (i.op === 'OpFunctionParameter' && i.id && i.fn) {
      const index = counters.get(i.fn) ?? 0;
      counters.set(i.fn, index + 1);
      params.set(i.id, { fn: i.fn, index });
    }
    if (i.op === 'OpReturnValue' && i.fn && i.args[0])
      returns.set(i.fn, [...(returns.get(i.fn) ?? []), i.args[0]]);
    if (i.op === 'OpStore' && i.args[0] && i.args[1])
      stores.set(i.args[0], [...(stores.get(i.args[0]) ?? []), i.args[1]]);
  }
  const nameOf = (id: string) => names.get(id) ?? id;

  const zeroSeen = new Set<string>();
  /** Provably zero: a 0 constant, a null constant, x & 0, x * 0, or a load of a variable only set to 0. */
  const isZero = (id: string): boolean => {
    const d = def.get(id);
    if (!d || zeroSeen.has(id)) return false;
    zeroSeen.add(id);
    try {
      switch (d.op) {
        case 'OpConstantNull':
          return true;
        case 'OpConstant':
          return Number(d.args[1]) === 0;
        case 'OpBitwiseAnd':
        case 'OpIMul':
          return isZero(d.args[1]!) || isZero(d.args[2]!);
        case 'OpCopyObject':
        case 'OpBitcast':
          return isZero(d.args[1]!);
        case 'OpLoad': {
          const v = def.get(d.args[1]!);
          if (!v || v.op !== 'OpVariable') return false;
          const init = v.args[2];
          if (init !== undefined && !isZero(init)) return false;
          // Only Private / Function variables are the shader's own; anything else comes from outside.
          if (v.args[1] !== 'Private' && v.args[1] !== 'Function') return false;
          return (stores.get(d.args[1]!) ?? []).every(isZero);
        }
        default:
          return false;
      }
    } finally {
      zeroSeen.delete(id);
    }
  };

  type Node = { id: string; path: string[] };
  /** The value `id` carries, looked through value-preserving ops (path = the ops passed). */
  const resolve = (id: string, path: string[] = [], depth = 0): Node => {
    const d = def.get(id);
    if (!d || depth > 64) return { id, path };
    const a = d.args;
    const step = (next: string) => resolve(next, [...path, `${d.op} ${nameOf(id)}`], depth + 1);
    switch (d.op) {
      case 'OpCopyObject':
      case 'OpBitcast':
        return step(a[1]!);
      case 'OpBitwiseOr':
      case 'OpBitwiseXor':
      case 'OpIAdd':
        if (isZero(a[2]!)) return step(a[1]!);
        if (isZero(a[1]!)) return step(a[2]!);
        return { id, path };
      case 'OpCompositeConstruct':
        // A splat (every component the same scalar): \`vec - s\` subtracts s from each lane, so a driver
        // that scalarizes may contract s's product into each lane's subtract.
        return a.slice(1).every((c) => c === a[1]) ? step(a[1]!) : { id, path };
      case 'OpISub':
      case 'OpShiftLeftLogical':
      case 'OpShiftRightLogical':
        return isZero(a[2]!) ? step(a[1]!) : { id, path };
      case 'OpFunctionCall': {
        const callee = a[1]!;
        const rets = returns.get(callee) ?? [];
        if (rets.length !== 1) return { id, path };
        const inner = resolve(rets[0]!, [...path, `call ${nameOf(callee)}`], depth + 1);
        const p = params.get(inner.id);
        if (p && p.fn === callee) {
          const arg = a[2 + p.index];
          return arg ? resolve(arg, inner.path, depth + 1) : inner;
        }
        return inner;
      }
      default:
        return { id, path };
    }
  };

  const found: Contractible[] = [];
  for (const i of insts) {
    if (!i.id) continue;
    if (i.op === 'OpExtInst' && /^(Fma|FMA)$/.test(i.args[2] ?? ''))
      found.push({ fn: nameOf(i.fn ?? '?'), add: i.id, mul: i.id, text: `explicit ${i.args[2]} ${i.id}` });
    if (i.op !== 'OpFAdd' && i.op !== 'OpFSub') continue;
    for (const operand of i.args.slice(1, 3)) {
      let node = resolve(operand);
      let d = def.get(node.id);
      if (d?.op === 'OpFNegate') {
        node = resolve(d.args[1]!, [...node.path, `OpFNegate ${node.id}`]);
        d = def.get(node.id);
      }
      if (d && PRODUCTS.has(d.op))
        found.push({
          fn: nameOf(i.fn ?? '?'),
          add: i.id,
          mul: node.id,
          text: `${i.op} ${i.id} <- ${[...node.path, `${d.op} ${node.id}`].join(' <- ')}`,
        });
    }
  }
  return found;
}

/**
 * UnpackHalf2x16 instructions whose operand is a PackHalf2x16 result (through value-preserving ops): a
 * round trip a driver may fold to the identity, dropping the f16 rounding.
 */
export function halfRoundTrips(spirv: string): string[] {
  const insts = parseSpirv(spirv);
  const def = new Map(insts.filter((i) => i.id).map((i) => [i.id!, i]));
  const source = (id: string): Inst | undefined => {
    const d = def.get(id);
    return d && (d.op === 'OpCopyObject' || d.op === 'OpBitcast') ? source(d.args[1]!) : d;
  };
  return insts
    .filter((i) => i.op === 'OpExtInst' && i.args[2] === 'UnpackHalf2x16')
    .filter((i) => {
      const from = source(i.args[3]!);
      return from?.op === 'OpExtInst' && from.args[2] === 'PackHalf2x16';
    })
    .map((i) => `${i.id} = ${i.op} ${i.args.join(' ')}`);
}
