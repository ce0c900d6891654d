// mmq inspect FILE.gguf [--json]: the header of a GGUF (metadata, tensors and which kernels take each, the
// GEMMs it holds), read through fileSource + openGguf: a 40 GB model costs its header's bytes, not 40 GB.
// The listing is written as it is made, a chunk of rows at a time: a valid header of millions of keys
// (gguf.cpp reads them) prints in seconds without first building the whole text.
import { CATALOG } from '../src/kernels/catalog';
import {
  listTensors,
  presetFromGgufMetadata,
  type ModelPreset,
  type TensorListing,
} from '../src/kernels/models';
import {
  arrayLength,
  excerpt,
  ggufTypeName,
  inflatedSource,
  jsonText,
  jsonValue,
  metadataText,
  metadataTypeLabel,
  openGguf,
  SHOWN_ELEMENTS,
  tensorDataProblem,
  type GgufFile,
  type GgufTensorInfo,
  type GgufValue,
} from '../src/kernels/quant';
import { CliError, parseArgs } from './args';
import { fileSource } from './fileSource';
import { openError, type CliIo, type Subcommand } from './subcommand';

function preset(file: GgufFile): { preset: ModelPreset } | { error: string } {
  try {
    return { preset: presetFromGgufMetadata(file.metadata, file.tensors) };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

// Names and keys from the file are cut to an excerpt, any cell to CELL_CHARS (all escaped): a 4 MB key
// would otherwise set the width of every row.
const NAME_CHARS = 80;
const CELL_CHARS = 400;
/** The longest string --json writes whole (characters); a longer one is cut, and says how long it was. */
export const JSON_STRING_CHARS = 4096;
// Lines handed to the writer at once.
const CHUNK_LINES = 2000;

/** Lines written in chunks, never all held at once. */
function chunkedWriter(write: (text: string) => void) {
  let lines: string[] = [];
  return {
    line(text: string) {
      lines.push(text);
      if (lines.length >= CHUNK_LINES) this.flush();
    },
    flush() {
      if (lines.length) write(lines.join('\n') + '\n');
      lines = [];
    },
  };
}

/**
 * A table from rows made twice (once for the column widths, once to print): no row array of a
 * million entries. Every cell is escaped and cut to CELL_CHARS.
 */
function writeTable(
  out: ReturnType<typeof chunkedWriter>,
  rows: () => Iterable<string[]>,
  right: ReadonlySet<number> = new Set(),
): void {
  const widths: number[] = [];
  for (const r of rows())
    r.forEach((cell, c) => (widths[c] = Math.max(widths[c] ?? 0, excerpt(cell, CELL_CHARS).length)));
  for (const r of rows())
    out.line(
      r
        .map((cell, c) => {
          const text = excerpt(cell, CELL_CHARS);
          return right.has(c) ? text.padStart(widths[c]!) : text.padEnd(widths[c]!);
        })
        .join('  ')
        .trimEnd(),
    );
}

/** ne, offset and bytes as text, exact past 2^53 (GgufTensorInfo.exact). */
function sizes(t: GgufTensorInfo): { ne: string[]; offset: string; bytes: string } {
  if (t.exact)
    return { ne: t.exact.ne.map(String), offset: String(t.exact.offset), bytes: String(t.exact.byteLength) };
  return {
    ne: t.ne.map(String),
    offset: String(t.offset),
    bytes: t.byteLength === undefined ? '?' : String(t.byteLength),
  };
}

/** Which families take a tensor as it is, or why none does (its type, its shape, its data cut short). */
function kernelsText(row: TensorListing, cut: string | undefined): string {
  if (row.note) return `no: ${row.note}`;
  if (cut) return 'no: its data is cut short (below)';
  const runs = row.kernels.filter((k) => k.problems.length === 0).map((k) => k.kernel);
  if (runs.length) return runs.join(', ');
  const first = row.kernels.find((k) => k.problems.length);
  return first ? `no: ${first.kernel}: ${first.problems[0]!}` : 'no';
}

interface Listed {
  file: GgufFile;
  rows: TensorListing[];
  cut: Map<string, string>;
  preset: ReturnType<typeof preset>;
}

function listed(path: string, file: GgufFile): Listed {
  const ref = { name: path, size: file.fileSize, headerHash: file.headerHash };
  const cut = new Map<string, string>();
  for (const t of file.tensors) {
    const problem = tensorDataProblem(t, file.fileSize);
    if (problem) cut.set(t.name, problem);
  }
  return { file, rows: listTensors(file.tensors, CATALOG.families, ref), cut, preset: preset(file) };
}

function human(path: string, { file, rows, cut, preset: p }: Listed, write: (text: string) => void): void {
  const out = chunkedWriter(write);
  out.line(
    `${excerpt(path)}: GGUF v${file.version}, ${file.fileSize} bytes, ${file.tensors.length} tensors, ${file.metadata.size} metadata keys`,
  );
  out.line(
    `alignment ${file.alignment}, data at ${file.dataOffset}, header ${file.headerBytes} bytes, header hash ${file.headerHash}`,
  );
  out.line('');
  out.line('metadata');
  writeTable(out, function* () {
    for (const [key, value] of file.metadata)
      yield [
        '  ' + excerpt(key, NAME_CHARS),
        metadataTypeLabel(file.metadataTypes.get(key)!),
        metadataText(value),
      ];
  });
  out.line('');
  out.line('tensors (kernels: the families that take it as it is, or why none does)');
  writeTable(
    out,
    function* () {
      yield ['  name', 'type', 'ne', 'shape', 'offset', 'bytes', 'kernels'];
      for (let i = 0; i < file.tensors.length; i++) {
        const t = file.tensors[i]!;
        const s = sizes(t);
        yield [
          '  ' + excerpt(t.name, NAME_CHARS),
          t.typeName,
          `[${s.ne.join(', ')}]`,
          `[${[...s.ne].reverse().join(', ')}]`,
          s.offset,
          s.bytes,
          kernelsText(rows[i]!, cut.get(t.name)),
        ];
      }
    },
    new Set([4, 5]),
  );
  out.line('');
  if (cut.size) {
    out.line(`cut short: ${cut.size} of ${file.tensors.length} tensors cannot be read (the others can)`);
    for (const problem of cut.values()) out.line(`  ${problem}`);
    out.line('');
  }
  if ('error' in p) out.line(`GEMMs: none derived (${excerpt(p.error, 200)})`);
  else {
    out.line('GEMMs (out[m, n] = x[m, k] @ W[n, k]^T)');
    out.line(
      '  Q4_K, Q8_0: whether the kernels take this GEMM with its weight in that format (k a whole number of blocks: 256 for Q4_K, 32 for Q8_0)',
    );
    writeTable(
      out,
      function* () {
        yield ['  name', 'n', 'k', 'experts', 'topk', 'Q4_K', 'Q8_0'];
        for (const g of p.preset.gemms)
          yield [
            '  ' + g.name,
            String(g.n),
            String(g.k),
            g.experts === undefined ? '' : String(g.experts),
            g.topk === undefined ? '' : String(g.topk),
            g.fits.Q4_K ? 'yes' : 'no',
            g.fits.Q8_0 ? 'yes' : 'no',
          ];
      },
      new Set([1, 2, 3, 4]),
    );
  }
  out.flush();
}

/** A string as --json writes it: whole up to JSON_STRING_CHARS, else cut, with its length said. */
function jsonString(s: string): { value: string } | { value: string; truncated: true; length: number } {
  if (s.length <= JSON_STRING_CHARS) return { value: s };
  const head = s.slice(0, JSON_STRING_CHARS);
  // Cut on a code point boundary: a lone surrogate is not valid UTF-8 output.
  return {
    value: /[\ud800-\udbff]$/.test(head) ? head.slice(0, -1) : head,
    truncated: true,
    length: s.length,
  };
}

/** A metadata value for --json: long arrays cut to their first elements, long strings to JSON_STRING_CHARS. */
function metadataJson(file: GgufFile, key: string, value: GgufValue): Record<string, unknown> {
  const t = file.metadataTypes.get(key)!;
  const n = arrayLength(value);
  const cutString = (v: unknown) => (typeof v === 'string' ? jsonString(v).value : v);
  const longStrings =
    Array.isArray(value) && value.some((v) => typeof v === 'string' && v.length > JSON_STRING_CHARS);
  return {
    type: ggufTypeName(t.type),
    ...(t.elementType === undefined ? {} : { elementType: ggufTypeName(t.elementType) }),
    ...(n === undefined ? {} : { length: n, truncated: n > SHOWN_ELEMENTS }),
    ...(typeof value === 'string'
      ? jsonString(value)
      : {
          value: Array.isArray(value) ? (jsonValue(value) as unknown[]).map(cutString) : jsonValue(value),
          ...(longStrings ? { stringsCutTo: JSON_STRING_CHARS } : {}),
        }),
  };
}

/** `"key": value` lines of one JSON object member, indented as JSON.stringify(_, null, 2) nests them. */
const member = (key: string, value: unknown, indent: string) =>
  `${indent}${jsonText(key)}: ${jsonText(value, 2).replace(/\n/g, `\n${indent}`)}`;
/** `"key": value` on one line: a metadata entry (a header may hold millions). */
const compactMember = (key: string, value: unknown, indent: string) =>
  `${indent}${jsonText(key)}: ${jsonText(value)}`;

function json(path: string, { file, rows, cut, preset: p }: Listed, write: (text: string) => void): void {
  const out = chunkedWriter(write);
  const head = {
    file: path,
    size: file.fileSize,
    version: file.version,
    alignment: file.alignment,
    dataOffset: file.dataOffset,
    headerBytes: file.headerBytes,
    headerHash: file.headerHash,
  };
  out.line('{');
  for (const [k, v] of Object.entries(head)) out.line(member(k, v, '  ') + ',');
  out.line('  "metadata": {');
  // One entry a line. A key past JSON_STRING_CHARS is cut too (its entry says so); a cut that meets another key gets a suffix.
  const keys = new Set<string>();
  let i = 0;
  for (const [key, value] of file.metadata) {
    const cutKey = jsonString(key);
    let name = cutKey.value;
    for (let n = 2; keys.has(name); n++) name = `${cutKey.value} #${n}`;
    keys.add(name);
    const entry = {
      ...('truncated' in cutKey ? { key: { truncated: true, length: cutKey.length } } : {}),
      ...metadataJson(file, key, value),
    };
    out.line(compactMember(name, entry, '    ') + (++i < file.metadata.size ? ',' : ''));
  }
  out.line('  },');
  out.line('  "tensors": [');
  file.tensors.forEach((t, j) => {
    const row = rows[j]!;
    const exact = t.exact
      ? {
          exact: {
            ne: t.exact.ne.map(String),
            offset: String(t.exact.offset),
            bytes: String(t.exact.byteLength),
          },
        }
      : {};
    const entry = {
      name: t.name,
      type: t.typeName,
      typeId: t.type,
      ne: t.ne,
      shape: t.shape,
      offset: t.offset,
      bytes: t.byteLength ?? null,
      ...exact,
      kernels: row.kernels.filter((k) => k.problems.length === 0).map((k) => k.kernel),
      ...(row.note ? { note: row.note } : {}),
      ...(cut.has(t.name) ? { cutShort: cut.get(t.name) } : {}),
    };
    out.line('    ' + jsonText(entry) + (j + 1 < file.tensors.length ? ',' : ''));
  });
  out.line('  ],');
  out.line(member('gemms', 'preset' in p ? p.preset.gemms : null, '  '));
  out.line('}');
  out.flush();
}

export const inspect: Subcommand = {
  name: 'inspect',
  usage: 'mmq inspect FILE.gguf [--json]',
  summary:
    'metadata, tensors and GEMMs of a GGUF, and which kernels take each tensor (reads the header only)',
  async run(args, io: CliIo) {
    const a = parseArgs('inspect', args, { boolean: ['--json'] });
    if (a.positionals.length !== 1) {
      throw new CliError(`mmq inspect: expected one FILE.gguf, got ${a.positionals.length} arguments`);
    }
    const path = a.positionals[0]!;
    const raw = await fileSource(path).catch((e: unknown) => {
      throw openError(path, e);
    });
    let file: GgufFile;
    try {
      file = await openGguf(await inflatedSource(raw), { maxArrayElements: SHOWN_ELEMENTS });
    } finally {
      await raw.close();
    }
    const l = listed(path, file);
    if (a.booleans.has('--json')) json(path, l, io.stdout);
    else human(path, l, io.stdout);
    return 0;
  },
};
