import { describe, expect, it } from 'vitest';
import { bindingDecls, bindingLayout, bindingNames, readOnly, readWrite } from './bindings';
import { GRID_SLICE_BINDING, GRID_SLICE_STRUCT, withGridSlice } from './gridSlice';

const table = {
  x: readOnly('array<vec4f>', 'activation'),
  w4: { ...readOnly('array<vec4<u32>>'), buffer: 'w' },
  out: { ...readWrite('array<f32>', '[M, N]'), before: '// the result' },
  dims: { uniform: 'Dims' },
};

describe('binding tables', () => {
  it('number the declarations in entry order, each with its access, comment and lines above', () => {
    expect(bindingDecls(table).split('\n')).toEqual([
      '@group(0) @binding(0) var<storage, read> x: array<vec4f>; // activation',
      '@group(0) @binding(1) var<storage, read> w4: array<vec4<u32>>;',
      '// the result',
      '@group(0) @binding(2) var<storage, read_write> out: array<f32>; // [M, N]',
      '@group(0) @binding(3) var<uniform> dims: Dims;',
    ]);
  });

  it("bind the plan's buffers in the same order, under their own names where given", () => {
    expect(bindingNames(table)).toEqual(['x', 'w', 'out', 'dims']);
  });

  it('bind the grid slice last, its struct above it unless the module declares it', () => {
    const sliced = withGridSlice({ out: readWrite('array<f32>') });
    expect(bindingNames(sliced)).toEqual(['out', GRID_SLICE_BINDING]);
    expect(bindingDecls(sliced).split('\n').slice(1)).toEqual([
      GRID_SLICE_STRUCT,
      '@group(0) @binding(1) var<uniform> grid_slice: GridSlice; // set by the host, which may run the grid in slices',
    ]);
    expect(bindingDecls(withGridSlice({}, { struct: false }))).not.toContain('struct');
  });

  it('number the tables of a layout one after another', () => {
    const { decls, names } = bindingLayout({ a: readOnly('array<u32>') }, {}, table);
    expect(decls[0]).toContain('@binding(0) var<storage, read> a:');
    expect(decls[1]).toBe('');
    expect(decls[2]).toContain('@binding(1) var<storage, read> x:');
    expect(decls[2]).toContain('@binding(4) var<uniform> dims:');
    expect(names).toEqual(['a', 'x', 'w', 'out', 'dims']);
  });
});
