// Readers for test/golden/ (ggml's and gguf-py's outputs, copied in unchanged; see its README).
// Tests take their expected bytes from here and never write to the folder.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of a file under test/golden/.
 * @example goldenPath('quant/normal.f32')
 */
export function goldenPath(rel: string): string {
  return fileURLToPath(new URL(`./golden/${rel}`, import.meta.url));
}

/**
 * A file under test/golden/ as its own (unshared, aligned) bytes.
 * @example goldenBytes('quant/normal.ggml.q4_K').length === 16 * 144
 */
export function goldenBytes(rel: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(readFileSync(goldenPath(rel)));
}

/**
 * A little-endian f32 file under test/golden/ (the machine running the tests is little-endian).
 * @example goldenF32('quant/normal.f32').length === 4 * 1024
 */
export function goldenF32(rel: string): Float32Array<ArrayBuffer> {
  return new Float32Array(goldenBytes(rel).buffer);
}

/** One input of golden/quant/cases.json: `<name>.f32` holds rows x k values. */
export interface GoldenQuantCase {
  name: string;
  rows: number;
  k: number;
  n: number;
  desc: string;
}

/**
 * Every case of golden/quant/cases.json.
 * @example for (const { name, rows, k } of goldenQuantCases()) quantizeQ4K(goldenF32(`quant/${name}.f32`), rows, k);
 */
export function goldenQuantCases(): GoldenQuantCase[] {
  const json = JSON.parse(readFileSync(goldenPath('quant/cases.json'), 'utf8')) as {
    cases: GoldenQuantCase[];
  };
  return json.cases;
}

/**
 * The gguf-py file, gunzipped.
 * @example parseGguf(goldenGguf()).tensors.length === 8
 */
export function goldenGguf(): Uint8Array<ArrayBuffer> {
  return new Uint8Array(gunzipSync(readFileSync(goldenPath('gguf/peer_default.gguf.gz'))));
}

/** gguf-py's view of the golden GGUF (peer_default.gguf_py.json). */
export interface GoldenGgufView {
  alignment: number;
  data_offset: number;
  meta: Record<string, { type: string; value: unknown; sub?: string; len?: number }>;
  tensors: { name: string; type: string; ne: number[]; offset: number; nbytes: number; deq: boolean }[];
}

/**
 * peer_default.gguf_py.json, parsed.
 * @example goldenGgufView().data_offset === 99520
 */
export function goldenGgufView(): GoldenGgufView {
  return JSON.parse(readFileSync(goldenPath('gguf/peer_default.gguf_py.json'), 'utf8')) as GoldenGgufView;
}
