import { describe, expect, it } from 'vitest';
import type { OwnershipBuffers } from '../../workers/protocol';
import {
  badByOwner,
  passSlowerNote,
  badMask,
  errorBins,
  errorField,
  errorSplit,
  EXACT_COLOR,
  fnv1a,
  laneElementIndex,
  logPosition,
  NONFINITE_COLOR,
  ownerColor,
  ownershipDiff,
  ownershipFlags,
  rampColor,
  tileGeometry,
} from './analysis';

/** Ownership of a rows x cols output tiled by tr x tc workgroup tiles, `per` consecutive elements per lane. */
function tiled(
  rows: number,
  cols: number,
  tr: number,
  tc: number,
  plane: number,
  per: number,
): OwnershipBuffers {
  const len = rows * cols;
  const own: OwnershipBuffers = {
    rows,
    cols,
    count: new Uint32Array(len).fill(1),
    workgroup: new Uint32Array(len),
    plane: new Uint32Array(len),
    lane: new Uint32Array(len),
  };
  const gx = Math.ceil(cols / tc);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const local = (r % tr) * tc + (c % tc);
      const thread = Math.floor(local / per);
      own.workgroup[i] = Math.floor(r / tr) * gx + Math.floor(c / tc);
      own.plane[i] = Math.floor(thread / plane);
      own.lane[i] = thread % plane;
    }
  }
  return own;
}

describe('error field', () => {
  it('is |got - want| / max|want|, Infinity for NaN', () => {
    expect([...errorField([1, 2, NaN], [1, 4, -8])]).toEqual([0, 0.25, Infinity]);
  });
  it('bit-exact gates flag -0 vs +0 even though the error is 0', () => {
    const got = new Float32Array([0, -0, 3]);
    const want = new Float32Array([0, 0, 3]);
    expect([...badMask(got, want, errorField(got, want), { kind: 'bit-exact' })]).toEqual([0, 1, 0]);
  });
  it('rel-to-max gates flag errors above the tolerance', () => {
    const got = new Float32Array([1, 1.01, 2]);
    const want = new Float32Array([1, 1, 1]);
    expect([...badMask(got, want, errorField(got, want), { kind: 'rel-to-max', tol: 0.05 })]).toEqual([
      0, 0, 1,
    ]);
  });
  it('maps onto the log scale with exact and non-finite ends', () => {
    expect(logPosition(0)).toBe(-1);
    expect(logPosition(Infinity)).toBe(2);
    expect(logPosition(1e-7)).toBe(0);
    expect(logPosition(1)).toBe(1);
    expect(logPosition(1e-3)).toBeCloseTo(4 / 7);
    expect(rampColor(-1)).toEqual(EXACT_COLOR);
    expect(rampColor(2)).toEqual(NONFINITE_COLOR);
    expect(rampColor(1)).toEqual([252, 255, 164]);
    const bins = errorBins(new Float32Array([0, 1e-7, 1, Infinity]));
    expect([...bins]).toEqual([0, 1, 64, 255]);
  });
});

describe('ownership', () => {
  it('flags elements stored never or twice', () => {
    const own = tiled(4, 4, 4, 4, 4, 4);
    own.count[3] = 0;
    own.count[9] = 2;
    expect(ownershipFlags(own)).toEqual({ never: 1, twice: 1, firstNever: [3], firstTwice: [9] });
  });
  it('diffs two maps element by element', () => {
    const a = tiled(8, 8, 4, 4, 4, 4);
    const b = tiled(8, 8, 4, 4, 4, 4);
    expect(ownershipDiff(a, b)).toBe(0);
    b.lane[5] = 7;
    expect(ownershipDiff(a, b)).toBe(1);
  });
  it('numbers each lane element in row-major order', () => {
    const own = tiled(2, 8, 2, 8, 4, 4); // lane 0 owns 0..3, lane 1 owns 4..7, lane 2 row 1 0..3 ...
    expect([...laneElementIndex(own)].slice(0, 8)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
  });
  it('colours change with the plane width, and planes differ in hue', () => {
    expect(ownerColor(0, 3, 4)).not.toEqual(ownerColor(0, 3, 32));
    expect(ownerColor(0, 0, 4)).not.toEqual(ownerColor(1, 0, 4));
  });
  it('recovers the workgroup tile and pads the partial edge tile', () => {
    const own = tiled(40, 24, 16, 16, 4, 8);
    expect(tileGeometry(own)).toEqual({ tileRows: 16, tileCols: 16, paddedRows: 48, paddedCols: 32 });
  });
});

describe('bad elements by owner', () => {
  it('names the single lane all bad elements belong to', () => {
    const own = tiled(16, 16, 16, 16, 4, 8);
    const mask = new Uint8Array(256);
    for (let i = 0; i < 256; i++) if (own.lane[i] === 3) mask[i] = 1;
    const s = badByOwner(mask, own);
    expect(s.bad).toBe(64);
    expect(s.byLane).toEqual([[3, 64]]);
    expect(s.byPlane.length).toBe(8);
    expect(s.sentence).toBe('all 64 bad elements stored belong to workgroup 0, lane 3');
  });
  it('summarises spread-out errors and the clean case', () => {
    const own = tiled(16, 16, 8, 8, 4, 4);
    const mask = new Uint8Array(256);
    mask[0] = mask[100] = mask[255] = 1;
    expect(badByOwner(mask, own).sentence).toMatch(/^3 bad elements over \d lanes/);
    expect(badByOwner(new Uint8Array(256), own).sentence).toBe('no bad elements');
  });
  it('does not blame workgroup 0, plane 0, lane 0 for elements no lane stored', () => {
    const own = tiled(16, 16, 4, 4, 4, 4); // 16 workgroups
    const mask = new Uint8Array(256);
    for (let wg = 0; wg < 16; wg++) {
      const i = own.workgroup.indexOf(wg);
      own.count[i] = 0; // never stored: the record holds zeros
      own.workgroup[i] = own.plane[i] = own.lane[i] = 0;
      mask[i] = 1;
    }
    const s = badByOwner(mask, own);
    expect(s.sentence).toBe('16 bad elements were never stored (the Ownership view shows where they belong)');
    expect(s.byWorkgroup).toEqual([]);
    mask[own.count.indexOf(1)] = 1;
    expect(badByOwner(mask, own).sentence).toMatch(
      /^all 1 bad element stored belong to .*; 16 bad elements were never stored/,
    );
  });
});

describe('error split and hashes', () => {
  it('separates quantization error from kernel error', () => {
    const fp = [10, -20, 5];
    const oracle = [10.5, -20, 5];
    const gpu = [10.5, -21, 5];
    const s = errorSplit(gpu, oracle, fp);
    expect(s.quantization).toBeCloseTo(0.5 / 20);
    expect(s.kernel).toBeCloseTo(1 / 20);
    expect(s.total).toBeCloseTo(1 / 20);
  });
  it('hashes bytes stably and sensitively', () => {
    const a = fnv1a([new Uint32Array([1, 2, 3])]);
    expect(a).toMatch(/^[0-9a-f]{8}$/);
    expect(fnv1a([new Uint32Array([1, 2, 3])])).toBe(a);
    expect(fnv1a([new Uint32Array([1, 2, 4])])).not.toBe(a);
  });
});

describe('a pass timed alone against the plan', () => {
  it('explains a pass slower alone than the whole plan, and says nothing otherwise', () => {
    expect(passSlowerNote(8.69, [{ label: 'GEMM', ms: 16.8 }])).toMatch(
      /^Pass 1 \(GEMM\) alone, 16\.8\d* ms, took longer than the whole plan, 8\.69\d* ms\. They are separate measurements/,
    );
    expect(
      passSlowerNote(8.69, [
        { label: 'a', ms: 2 },
        { label: 'b', ms: 6 },
      ]),
    ).toBeUndefined();
  });
});
