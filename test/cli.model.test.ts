// mmq model: a model's GEMMs on this machine's WebGPU (SwiftShader here). Every bad input is one line
// before a GPU opens; the guard refuses a model run estimated past 5 s without --yes; a tiny GGUF's
// forward pass is picked and timed at prefill and decode (stored winners from --kt-cache served, unproven
// ones not), written as the model-run JSON the app imports with a Kernel Tuner cache per shape; --tune
// hunts and stores each shape first; --guess measures nothing and says so.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../cli/mmq';
import { parseModelRun, phaseTotals } from '../src/kernels/models';
import { GgmlType, ggmlTensorByteLength } from '../src/kernels/quant';
import { expectOneLineError, runMmq } from './cliProcess';
import { writeGguf } from './ggufWriter';
import { tinyModelGguf } from './tinyModel';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-model-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const tiny = join(tmp, 'tiny.gguf');
writeFileSync(tiny, tinyModelGguf());
const quick = ['--no-probe', '--target-ms', '2', '--batches', '2'];
/** What Dawn's SwiftShader calls itself (the device id stored winners are filed under). */
const SWIFTSHADER_ID = 'google/swiftshader/SwiftShader driver 5.0.0#plane4';

/** mmq in this process, for input errors (nothing reaches a GPU). */
async function inProcess(...args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { code, out, err };
}

describe('mmq model: input', () => {
  it('refuses what it cannot run before a GPU opens, in one line each', async () => {
    const cases: [string[], RegExp][] = [
      [['model', '--m', '512'], /give a GGUF file or --preset ID \(one of them\)/],
      [['model', tiny, '--preset', 'llama-3.1-8b', '--m', '1'], /one of them/],
      [
        ['model', '--preset', 'llama-3', '--m', '1'],
        /no preset 'llama-3' \(llama-3.1-8b, qwen2.5-7b, mixtral-8x7b/,
      ],
      [['model', '--preset', 'llama-3.1-8b'], /give --m M \(prefill of M tokens\) and\/or --decode/],
      [
        ['model', '--preset', 'llama-3.1-8b', '--m', '0'],
        /--m must be a whole number from 1 to 131072, got '0'/,
      ],
      [['model', '--preset', 'llama-3.1-8b', '--m', '51.2'], /--m must be a whole number from 1 to 131072/],
      [
        ['model', '--preset', 'llama-3.1-8b', '--m', '512', '--format', 'Q5_0'],
        /--format must be one of Q4_K, Q8_0/,
      ],
      [['model', tiny, '--m', '8', '--format', 'Q8_0'], /--format is for a preset/],
      [['model', tiny, '--decode', '--tune'], /--tune keeps its hunts in --kt-cache DIR/],
      [['model', tiny, '--decode', '--guess', '--tune', '--kt-cache', tmp], /--guess measures nothing/],
      [
        ['model', tiny, '--decode', '--population', '2'],
        /--population and --generations shape the hunts of --tune/,
      ],
      [['model', tiny, '--decode', '--batches', '3x'], /--batches must be a whole number from 1 to 1000/],
      [
        ['model', tiny, '--decode', '--peaks', join(tmp, 'none.json')],
        /cannot open .*none\.json: no such file/,
      ],
      [
        ['model', join(tmp, 'missing.gguf'), '--decode'],
        /cannot open .*missing\.gguf: no such file or directory/,
      ],
      [['model', tiny, '--decode', '--json', tmp], /--json .* is a directory/],
      [['model', tiny, '--decode', '--kt-cache', tiny], /--kt-cache .*tiny\.gguf is not a directory/],
    ];
    for (const [args, msg] of cases) {
      const r = await inProcess(...args);
      expect([r.code, r.out], args.join(' ')).toEqual([2, '']);
      expect(r.err, args.join(' ')).toMatch(msg);
      expect(r.err.split('\n'), args.join(' ')).toEqual([expect.stringMatching(/^mmq: /), '']);
    }
    const notGguf = join(tmp, 'not.gguf');
    writeFileSync(notGguf, 'hello');
    expect((await inProcess('model', notGguf, '--decode')).err).toMatch(/^mmq: .*GGUF/);
    const notPeaks = join(tmp, 'peaks.json');
    writeFileSync(notPeaks, '{"peaks": {"bandwidthGBs": 0}}');
    expect((await inProcess('model', tiny, '--decode', '--peaks', notPeaks)).err).toMatch(/has no peaks/);
  });

  it('a model run estimated past 5 s is refused without --yes, with its estimate', async () => {
    const r = await runMmq(['model', '--preset', 'llama-3.1-8b', '--m', '512', ...quick]);
    expectOneLineError(r, 2, /this model run is estimated at .* candidate configs over 5 GEMMs.*add --yes/);
  }, 60_000);
});

describe('mmq model on SwiftShader', () => {
  it('--guess: a preset picked at the roofs of given peaks, nothing run, said to be a guess', async () => {
    const peaks = join(tmp, 'probe.json');
    writeFileSync(peaks, JSON.stringify({ peaks: { bandwidthGBs: 3000, ops: { 'int8-dot4': 60e12 } } }));
    const json = join(tmp, 'guess.json');
    const r = await runMmq([
      ...'model --preset llama-3.1-8b --m 512 --decode --guess --peaks'.split(' '),
      peaks,
      '--json',
      json,
    ]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^Llama-3\.1-8B on google SwiftShader.*5 GEMM shapes per forward pass; A GUESS: nothing was run/,
    );
    expect(r.stdout).toMatch(/attn_q x32, attn_output x32 +Q4_K 4096x4096 +64 +512 +\S+ dp4a .*\(guess\)/);
    expect(r.stdout).toMatch(/output x1 +Q4_K 128256x4096 +1 +1 /);
    expect(r.stdout).toMatch(/total per prefill of 512 +225 /);
    const run = parseModelRun(readFileSync(json, 'utf8'));
    expect(run.measured).toBe(false);
    expect(run.phases.map((p) => [p.phase, p.m])).toEqual([
      ['prefill', 512],
      ['decode', 1],
    ]);
    // Every launch has a guessed winner: the totals cover the pass.
    expect(phaseTotals(run, 1).coveredLaunches).toBe(225);
    expect(run.phases[0]!.picks.every((p) => p!.candidates.every((c) => c.verdict !== 'measured'))).toBe(
      true,
    );
  }, 60_000);

  it('picks and times a GGUF at prefill and decode, serving stored winners, writing the run and its KT caches', async () => {
    const kt = join(tmp, 'kt');
    mkdirSync(kt);
    const incumbent = { config: 'WM=2,WN=4,RM=1,RN=1,SCHED=0,ARM=0', generation: 0 };
    const hunt = (op: string, problem: string, winner: string, claim: string) => ({
      deviceId: SWIFTSHADER_ID,
      op,
      problem,
      winner,
      entries: [incumbent],
      claim: { verdict: claim },
    });
    // The tile family's hunt at prefill shows its winner faster; the coopmat hunt's pick was not: not served.
    writeFileSync(
      join(kt, 'tile.json'),
      JSON.stringify(
        hunt(
          'mmq_q4k_tile',
          'm=32,n=64,k=256,data=synthetic#0',
          'WM=1,WN=1,RM=1,RN=1,SCHED=1,ARM=0',
          'faster',
        ),
      ),
    );
    writeFileSync(
      join(kt, 'coop.json'),
      JSON.stringify(
        hunt(
          'mmq_q4k_coopmat',
          'm=32,n=64,k=256,data=synthetic#0',
          'WM=1,WN=1,RM=1,RN=1,STAGING=0,ARM=0,KSPLIT=1',
          'no measurable difference',
        ),
      ),
    );
    writeFileSync(join(kt, 'notes.json'), 'not json');
    const json = join(tmp, 'run.json');
    const r = await runMmq(
      ['model', tiny, '--m', '32', '--decode', ...quick, '--json', json, '--kt-cache', kt, '--yes'],
      {
        timeoutMs: 240_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^mmq model: 2 stored hunts in .* \(1 winners that may serve\)/);
    expect(r.stdout).toMatch(
      /^tiny-llama on google SwiftShader.*\(a CPU adapter: its times are not a GPU's\): 3 GEMM shapes/,
    );
    expect(r.stdout).toMatch(
      /prefill of 32 tokens:\nGEMM +weight +x\/pass +m +pick +ms +batches ms +% of roof +next family +ms\/pass/,
    );
    expect(r.stdout).toMatch(/attn_q x2, attn_output x2 +Q8_0 64x256 +4 +32 +mmq-q8-\S+ dp4a/);
    expect(r.stdout).toMatch(/output x1 +Q6_K 100x256 +1 +1 +none: no kernel takes Q6_K/);
    expect(r.stdout).toMatch(
      /no pick: Q8_0 64x256 at m = 1: mmq-q8-naive refused \(m = 1 is not a multiple of 16/,
    );
    expect(r.stdout).toMatch(/total per token +7 +2 GEMM shapes not covered \(2 of 7 launches\)/);
    const run = parseModelRun(readFileSync(json, 'utf8'));
    expect(run).toMatchObject({
      status: 'complete',
      measured: true,
      model: { source: 'gguf', name: 'tiny-llama' },
    });
    expect(run.adapter).toMatchObject({ deviceId: SWIFTSHADER_ID, software: true });
    const [prefill, decode] = run.phases;
    const ffn = prefill!.picks[1]!;
    const served = Object.fromEntries(ffn.candidates.map((c) => [c.kernel, c.served]));
    expect(served).toEqual({
      'mmq-q4k-blk': 'defaults',
      'mmq-q4k-rt': 'defaults',
      'mmq-q4k-tile': 'WM=1,WN=1,RM=1,RN=1,SCHED=1,ARM=0',
      // Refused before its offer: 32 rows are past a matvec's 16.
      'matvec-q4k': 'defaults',
      'coopmat-f16': 'incumbent',
    });
    expect(ffn.candidates.map((c) => c.verdict)).toEqual([
      'measured',
      'measured',
      'measured',
      'refused',
      'measured',
    ]);
    expect(ffn.margin).toBeGreaterThanOrEqual(1);
    // Decode: matvec joins (m <= 16), blk refuses one row.
    expect(decode!.picks[1]!.candidates.map((c) => [c.kernel, c.verdict])).toEqual([
      ['mmq-q4k-blk', 'refused'],
      ['mmq-q4k-rt', 'measured'],
      ['mmq-q4k-tile', 'measured'],
      ['matvec-q4k', 'measured'],
      ['coopmat-f16', 'measured'],
    ]);
    // The totals are the launches times each winner's ms.
    const winnerMs = (i: number) =>
      decode!.picks[i]!.candidates.find((c) => c.kernel === decode!.picks[i]!.winner)!.ms!;
    expect(phaseTotals(run, 1).ms).toBeCloseTo(2 * winnerMs(1), 10);
    // A Kernel Tuner cache per measured candidate, in the JSON and in the directory.
    const files = readdirSync(kt).filter((f) => f.startsWith('model-'));
    expect(files).toContain('model-prefill-m32-Q4_K-64x256-mmq-q4k-tile.kt.json');
    expect(files).toContain('model-decode-m1-Q4_K-64x256-matvec-q4k.kt.json');
    const exported = JSON.parse(readFileSync(json, 'utf8')) as {
      ktCaches: Record<string, { device_name: string }>;
    };
    expect(
      Object.keys(exported.ktCaches)
        .map((f) => `model-${f}`)
        .sort(),
    ).toEqual(files.sort());
  }, 240_000);

  it('--tune hunts each shape not stored yet, stores the hunt, and the run serves its winner', async () => {
    // One expert bank: one family (MoE), one hunt.
    const bank = join(tmp, 'bank.gguf');
    writeFileSync(
      bank,
      writeGguf({
        kv: [
          ['general.architecture', { t: 'str', v: 'qwen3moe' }],
          ['qwen3moe.expert_used_count', { t: 'u32', v: 2 }],
        ],
        tensors: [
          {
            name: 'blk.0.ffn_down_exps.weight',
            dims: [256, 32, 4],
            type: GgmlType.Q4_K,
            data: new Uint8Array(ggmlTensorByteLength(GgmlType.Q4_K, [256, 32, 4])!),
          },
        ],
      }),
    );
    const kt = join(tmp, 'kt-tune');
    const json = join(tmp, 'tuned.json');
    const args = ['model', bank, '--decode', ...quick, '--kt-cache', kt, '--json', json];
    const r = await runMmq([...args, '--tune', '--population', '2', '--generations', '1', '--yes'], {
      timeoutMs: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(kt).filter((f) => f.startsWith('hunt-'))).toEqual([
      'hunt-moe-q4k-id-tokens=1_n=32_k=256_experts=4_topk=2_routing=even_data=synthetic_0.kt.json',
    ]);
    const tuned = parseModelRun(readFileSync(json, 'utf8')).phases[0]!.picks[0]!;
    expect(tuned.winner).toBe('moe-q4k-id');
    // The hunt's winner (or the incumbent it confirmed) serves by name, not as 'incumbent'.
    expect(tuned.candidates[0]!.served).toMatch(/ROUTE=\d/);
    // Run again without --tune: the stored hunt is read back and served.
    const again = await runMmq(args, { timeoutMs: 120_000 });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/1 stored hunts in .* \(1 winners that may serve\)/);
    expect(parseModelRun(readFileSync(json, 'utf8')).phases[0]!.picks[0]!.candidates[0]!.served).toBe(
      tuned.candidates[0]!.served,
    );
  }, 300_000);

  it('names from the file are escaped in the table', async () => {
    const evil = join(tmp, 'evil.gguf');
    writeFileSync(evil, tinyModelGguf(1, 'x\x1b[2J\u202eevil'));
    const r = await runMmq(['model', evil, '--decode', '--guess', '--no-probe']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^x\\x1b\[2J\\u202eevil on /);
    expect(r.stdout.includes('\x1b')).toBe(false);
  }, 60_000);
});
