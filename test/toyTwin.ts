// The toy family's kernel (test/toyFamily.ts) as a CPU twin for test/cpuDevice.ts: what its WGSL computes,
// in JavaScript, with the ownership its recording variant stores. A test can make a config wrong.
import type { CpuKernel } from './cpuDevice';

/** A toy pass's schedule, read off its WGSL. */
export function toyScheduleOf(code: string): { wx: number; cols: number } {
  return {
    wx: Number(/@workgroup_size\((\d+)\)/.exec(code)?.[1]),
    cols: Number(/j < (\d+)u/.exec(code)?.[1]),
  };
}

/**
 * The twin of a toy pass: out = A @ B^T (m, n and k from the buffers' sizes; bindings a, b, out) with the
 * first `off(code)` elements one too large, and -- for the recording variant, which binds the owner buffer
 * fourth -- each element's store count, workgroup and lane as the kernel records them.
 * @example cpuDevice({ kernel: toyTwin() })
 */
export function toyTwin(off: (code: string) => number = () => 0): (code: string) => CpuKernel {
  return (code) => (b) => {
    const a = new Int32Array(b.get(0)!);
    const w = new Int32Array(b.get(1)!);
    const out = new Int32Array(b.get(2)!);
    const n = Math.round(Math.sqrt((out.length * w.length) / a.length));
    const k = w.length / n;
    const m = a.length / k;
    const wrong = off(code);
    for (let r = 0; r < m; r++)
      for (let c = 0; c < n; c++) {
        let acc = r * n + c < wrong ? 1 : 0;
        for (let l = 0; l < k; l++) acc += a[r * k + l]! * w[c * k + l]!;
        out[r * n + c] = acc;
      }
    const owner = b.get(3);
    if (!owner) return;
    const words = new Uint32Array(owner);
    const { wx, cols } = toyScheduleOf(code);
    const gridX = Math.ceil(n / (wx * cols));
    for (let r = 0; r < m; r++)
      for (let c = 0; c < n; c++) {
        const j = Math.floor(c / cols);
        const i = r * n + c;
        words[i * 3] = (words[i * 3] ?? 0) + 1;
        words[i * 3 + 1] = Math.floor(j / wx) + r * gridX;
        words[i * 3 + 2] = j % wx;
      }
  };
}
