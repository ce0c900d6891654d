// mmq quantize --type q8_0|q8_1|q4_K --rows R --k K IN.f32 OUT: raw little-endian f32 rows in, ggml block
// bytes out, byte-identical to ggml's quantize_row_*_ref (test/golden/quant holds ggml's own outputs).
import { writeFile } from 'node:fs/promises';
import { quantizeQ4K, quantizeQ8_0, quantizeQ8_1 } from '../src/kernels/quant';
import { CliError, parseArgs, positiveInt } from './args';
import { fileSource } from './fileSource';
import { openError, type Subcommand } from './subcommand';

const TYPES = {
  q8_0: { block: 32, blockBytes: 34, quantize: quantizeQ8_0 },
  q8_1: { block: 32, blockBytes: 36, quantize: quantizeQ8_1 },
  q4_K: { block: 256, blockBytes: 144, quantize: quantizeQ4K },
} as const;
type TypeName = keyof typeof TYPES;

// The most f32 input quantized in one command (it is held in memory, with its output).
const MAX_INPUT_BYTES = 2 ** 30;

function typeOf(text: string | undefined): TypeName {
  const t = (Object.keys(TYPES) as TypeName[]).find((n) => n.toLowerCase() === text?.toLowerCase());
  if (!t) {
    const types = Object.keys(TYPES).join(', ');
    throw new CliError(
      text === undefined
        ? `mmq quantize: --type is required (one of ${types})`
        : `mmq quantize: --type '${text}' is not one of ${types}`,
    );
  }
  return t;
}

export const quantize: Subcommand = {
  name: 'quantize',
  usage: 'mmq quantize --type q8_0|q8_1|q4_K --rows R --k K IN.f32 OUT',
  summary: "f32 rows to ggml blocks, byte-identical to ggml's reference quantizers",
  async run(args, io) {
    const a = parseArgs('quantize', args, { value: ['--type', '--rows', '--k'] });
    const type = typeOf(a.values.get('--type'));
    const need = (flag: string) => {
      const v = a.values.get(flag);
      if (v === undefined) throw new CliError(`mmq quantize: ${flag} is required`);
      return positiveInt('quantize', flag, v);
    };
    const rows = need('--rows');
    const k = need('--k');
    if (a.positionals.length !== 2) {
      throw new CliError(`mmq quantize: expected IN.f32 and OUT, got ${a.positionals.length} arguments`);
    }
    const [input, output] = a.positionals as [string, string];
    const { block, blockBytes, quantize: q } = TYPES[type];
    if (k % block !== 0) {
      throw new CliError(`mmq quantize: --k ${k} is not a multiple of ${type}'s ${block}-wide block`);
    }
    const want = rows * k * 4;
    if (want > MAX_INPUT_BYTES) {
      throw new CliError(
        `mmq quantize: --rows ${rows} --k ${k} is ${want} bytes of f32, over the ${MAX_INPUT_BYTES} quantized at once (split the rows)`,
      );
    }
    // The size is checked before a byte is read: /dev/zero or a FIFO is refused, not read for ever.
    const src = await fileSource(input).catch((e: unknown) => {
      throw openError(input, e);
    });
    let raw: Uint8Array;
    try {
      if (src.size !== want) {
        throw new CliError(
          `mmq quantize: ${input} has ${src.size} bytes, but --rows ${rows} --k ${k} needs ${rows} x ${k} x 4 = ${want}`,
        );
      }
      raw = await src.read(0, want);
    } finally {
      await src.close();
    }
    if (raw.length !== want) throw new CliError(`mmq quantize: ${input} shrank while it was read`);
    // DataView: the file is little-endian whatever the machine, and a Buffer may not be 4-byte aligned.
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const x = new Float32Array(rows * k);
    for (let i = 0; i < x.length; i++) x[i] = dv.getFloat32(4 * i, true);
    const { bytes } = q(x, rows, k);
    await writeFile(output, bytes).catch((e: unknown) => {
      throw openError(output, e);
    });
    const blocks = (rows * k) / block;
    io.stdout(
      `${type}: ${rows} x ${k} f32 -> ${blocks} blocks of ${blockBytes} bytes = ${bytes.length} bytes in ${output}\n`,
    );
    return 0;
  },
};
