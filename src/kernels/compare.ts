// Correctness gates shared by tests, the tuner and the playground, as the seed defines them.

/**
 * Scale-relative gate: max|got - want| / max|want|. Per-element relative error is meaningless for MMQ:
 * a signed int8 sum cancels to near zero often, which explodes the denominator (the seed's rel_to_max).
 * A NaN anywhere in `got` yields Infinity, so it can never pass.
 * @example relToMax(new Float32Array([1, 2]), new Float32Array([1, 2.5])) === 0.2
 */
export function relToMax(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) throw new RangeError(`length ${got.length} != ${want.length}`);
  let maxAbs = 0;
  let refMax = 1e-9;
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (Number.isNaN(g) || !Number.isFinite(g)) return Infinity;
    maxAbs = Math.max(maxAbs, Math.abs(g - w));
    refMax = Math.max(refMax, Math.abs(w));
  }
  return maxAbs / refMax;
}

/** Indices whose bit patterns differ (f32 compared as u32, so -0 != +0 and NaNs are caught). */
export function bitMismatches(
  got: Float32Array | Int32Array,
  want: Float32Array | Int32Array,
  limit = 16,
): number[] {
  if (got.length !== want.length) throw new RangeError(`length ${got.length} != ${want.length}`);
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(want.buffer, want.byteOffset, want.length);
  const out: number[] = [];
  for (let i = 0; i < a.length && out.length < limit; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

export type Gate = { kind: 'bit-exact' } | { kind: 'rel-to-max'; tol: number };

export interface Verdict {
  pass: boolean;
  gate: Gate;
  relToMax: number;
  maxAbsDelta: number;
  maxAbsRef: number;
  mismatches: number;
  /** First few differing indices (bit-level for bit-exact gates, |delta| > tol*max|ref| otherwise). */
  firstBad: number[];
}

/** Judge a GPU result against its oracle under the gate. */
export function judge(got: Float32Array | Int32Array, want: Float32Array | Int32Array, gate: Gate): Verdict {
  const rel = relToMax(got, want);
  let maxAbs = 0;
  let maxRef = 0;
  for (let i = 0; i < want.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(got[i]! - want[i]!));
    maxRef = Math.max(maxRef, Math.abs(want[i]!));
  }
  let mismatches = 0;
  const firstBad: number[] = [];
  if (gate.kind === 'bit-exact') {
    const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
    const b = new Uint32Array(want.buffer, want.byteOffset, want.length);
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        mismatches++;
        if (firstBad.length < 16) firstBad.push(i);
      }
    }
  } else {
    const thr = gate.tol * Math.max(maxRef, 1e-9);
    for (let i = 0; i < want.length; i++) {
      const d = Math.abs(got[i]! - want[i]!);
      if (!(d <= thr)) {
        mismatches++;
        if (firstBad.length < 16) firstBad.push(i);
      }
    }
  }
  const pass = gate.kind === 'bit-exact' ? mismatches === 0 : rel < gate.tol;
  return { pass, gate, relToMax: rel, maxAbsDelta: maxAbs, maxAbsRef: maxRef, mismatches, firstBad };
}

/**
 * A gate as people read it.
 * @example gateText({ kind: 'rel-to-max', tol: 1e-5 }) === 'rel_to_max < 1e-5'
 */
export function gateText(gate: Gate): string {
  return gate.kind === 'bit-exact' ? 'bit-exact' : `rel_to_max < ${gate.tol.toExponential(0)}`;
}

/**
 * A verdict in one line: "matches oracle (bit-exact)", or how many elements differ and by how much.
 * @example verdictText(judge(out, oracle, gate))
 */
export function verdictText(v: Verdict): string {
  if (v.pass) return `matches oracle (${gateText(v.gate)}; rel_to_max ${v.relToMax.toExponential(2)})`;
  return `differs from oracle: ${v.mismatches} elements off, rel_to_max ${v.relToMax.toExponential(2)} (gate ${gateText(v.gate)})`;
}
