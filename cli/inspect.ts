// mmq inspect FILE.gguf [--json]: the header of a GGUF (metadata, tensors, the GEMMs it holds), read
// through fileSource + openGguf: a 40 GB model costs its header's bytes, not 40 GB.
import { presetFromGgufMetadata, type ModelPreset } from '../src/kernels/models';
import {
  arrayLength,
  excerpt,
  ggufTypeName,
  inflatedSource,
  jsonText,
  jsonValue,
  metadataRows,
  openGguf,
  SHOWN_ELEMENTS,
  tensorDataProblem,
  type GgufFile,
} from '../src/kernels/quant';
import { CliError, parseArgs } from './args';
import { fileSource } from './fileSource';
import { openError, type Subcommand } from './subcommand';

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

function table(rows: string[][], right: ReadonlySet<number> = new Set()): string[] {
  rows = rows.map((r) => r.map((cell) => excerpt(cell, CELL_CHARS)));
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (right.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** The tensors a file cut short cannot give, with why (the others are all there). */
function cutShort(file: GgufFile): { name: string; problem: string }[] {
  return file.tensors.flatMap((t) => {
    const problem = tensorDataProblem(t, file.fileSize);
    return problem ? [{ name: t.name, problem }] : [];
  });
}

function human(path: string, file: GgufFile): string {
  const p = preset(file);
  const cut = cutShort(file);
  const lines = [
    `${excerpt(path)}: GGUF v${file.version}, ${file.fileSize} bytes, ${file.tensors.length} tensors, ${file.metadata.size} metadata keys`,
    `alignment ${file.alignment}, data at ${file.dataOffset}, header ${file.headerBytes} bytes, header hash ${file.headerHash}`,
    '',
    'metadata',
    ...table(metadataRows(file).map((r) => ['  ' + excerpt(r.key, NAME_CHARS), r.type, r.value])),
    '',
    'tensors',
    ...table(
      [
        ['  name', 'type', 'ne', 'shape', 'offset', 'bytes'],
        ...file.tensors.map((t) => [
          '  ' + excerpt(t.name, NAME_CHARS),
          t.typeName,
          `[${t.ne.join(', ')}]`,
          `[${t.shape.join(', ')}]`,
          String(t.offset),
          t.byteLength === undefined ? '?' : String(t.byteLength),
        ]),
      ],
      new Set([4, 5]),
    ),
    '',
  ];
  if (cut.length) {
    lines.push(`cut short: ${cut.length} of ${file.tensors.length} tensors cannot be read (the others can)`);
    lines.push(...cut.map((c) => `  ${c.problem}`), '');
  }
  if ('error' in p) lines.push(`GEMMs: none derived (${excerpt(p.error, 200)})`);
  else {
    lines.push('GEMMs (out[m, n] = x[m, k] @ W[n, k]^T)');
    lines.push(
      '  Q4_K, Q8_0: whether the kernels take this GEMM with its weight in that format (k a whole number of blocks: 256 for Q4_K, 32 for Q8_0)',
    );
    lines.push(
      ...table(
        [
          ['  name', 'n', 'k', 'experts', 'topk', 'Q4_K', 'Q8_0'],
          ...p.preset.gemms.map((g) => [
            '  ' + g.name,
            String(g.n),
            String(g.k),
            g.experts === undefined ? '' : String(g.experts),
            g.topk === undefined ? '' : String(g.topk),
            g.fits.Q4_K ? 'yes' : 'no',
            g.fits.Q8_0 ? 'yes' : 'no',
          ]),
        ],
        new Set([1, 2, 3, 4]),
      ),
    );
  }
  return lines.join('\n') + '\n';
}

function json(path: string, file: GgufFile): string {
  const p = preset(file);
  const cut = new Map(cutShort(file).map((c) => [c.name, c.problem]));
  return (
    jsonText(
      {
        file: path,
        size: file.fileSize,
        version: file.version,
        alignment: file.alignment,
        dataOffset: file.dataOffset,
        headerBytes: file.headerBytes,
        headerHash: file.headerHash,
        metadata: Object.fromEntries(
          [...file.metadata].map(([key, value]) => {
            const t = file.metadataTypes.get(key)!;
            const n = arrayLength(value);
            return [
              key,
              {
                type: ggufTypeName(t.type),
                ...(t.elementType === undefined ? {} : { elementType: ggufTypeName(t.elementType) }),
                ...(n === undefined ? {} : { length: n, truncated: n > SHOWN_ELEMENTS }),
                value: jsonValue(value),
              },
            ];
          }),
        ),
        tensors: file.tensors.map((t) => ({
          name: t.name,
          type: t.typeName,
          typeId: t.type,
          ne: t.ne,
          shape: t.shape,
          offset: t.offset,
          bytes: t.byteLength ?? null,
          ...(cut.has(t.name) ? { cutShort: cut.get(t.name) } : {}),
        })),
        gemms: 'preset' in p ? p.preset.gemms : null,
      },
      2,
    ) + '\n'
  );
}

export const inspect: Subcommand = {
  name: 'inspect',
  usage: 'mmq inspect FILE.gguf [--json]',
  summary: 'metadata, tensors and GEMMs of a GGUF (reads the header only)',
  async run(args, io) {
    const a = parseArgs('inspect', args, { boolean: ['--json'] });
    if (a.positionals.length !== 1) {
      throw new CliError(`mmq inspect: expected one FILE.gguf, got ${a.positionals.length} arguments`);
    }
    const path = a.positionals[0]!;
    const raw = await fileSource(path).catch((e: unknown) => {
      throw openError(path, e);
    });
    try {
      const src = await inflatedSource(raw);
      const file = await openGguf(src, { maxArrayElements: SHOWN_ELEMENTS });
      io.stdout(a.booleans.has('--json') ? json(path, file) : human(path, file));
      return 0;
    } finally {
      await raw.close();
    }
  },
};
