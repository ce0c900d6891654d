// The tensor filter finds tensors by shape and bytes too, as the README says, not only by name and type.
import { describe, expect, it } from 'vitest';
import type { TensorListing } from '../../kernels/tensors';
import { bytesText, tensorMatches } from './tensorFilter';

const tensor = (name: string, typeName: string, shape: number[], bytes: number): TensorListing => ({
  name,
  typeName,
  ne: [...shape].reverse(),
  shape,
  offset: 0,
  bytes,
  kernels: typeName === 'Q4_K' ? [{ kernel: 'mmq-q4k-rt', title: 'rt', problems: [] }] : [],
});

const down = tensor('blk.0.ffn_down.weight', 'Q4_K', [4096, 14336], 33_030_144);
const norm = tensor('blk.0.attn_norm.weight', 'F32', [4096], 16_384);
const names = (filter: string) => [down, norm].filter((t) => tensorMatches(t, filter)).map((t) => t.name);

describe('tensor filter', () => {
  it('matches name, type and kernel as before', () => {
    expect(names('')).toEqual([down.name, norm.name]);
    expect(names('ffn_down')).toEqual([down.name]);
    expect(names('q4_k')).toEqual([down.name]);
    expect(names('mmq-q4k')).toEqual([down.name]);
  });

  it('matches a shape: one dimension, or several however written', () => {
    expect(names('14336')).toEqual([down.name]);
    expect(names('4096')).toEqual([down.name, norm.name]);
    for (const f of ['4096x14336', '4096 × 14336', '4096 x 14336', '4096*14336'])
      expect(names(f), f).toEqual([down.name]);
    expect(names('14336x4096')).toEqual([]);
  });

  it('matches bytes, exact or as the table shows them, and combines words', () => {
    expect(bytesText(down.bytes)).toBe('31.5 MiB');
    expect(names('33030144')).toEqual([down.name]);
    expect(names('31.5 MiB')).toEqual([down.name]);
    expect(names('16.0kib')).toEqual([norm.name]);
    expect(names('q4_k 4096')).toEqual([down.name]);
    expect(names('f32 14336')).toEqual([]);
  });
});
