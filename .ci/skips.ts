// The skips CI accepts, declared once: each reason a test may give for skipping, and the tests that may give
// it (by file and full name). A test skips through test/skip.ts, which checks the reason on the adapter or
// the machine itself (never by asking product code, whose answer a bug can turn into a skip) and records it
// in the test's meta; .ci/verdict.ts fails any skip without a reason, with a reason not declared here, or
// with one this list does not allow for that test. Where a reason does not hold (an adapter with subgroup
// matrices, a machine with ONNX Runtime), its tests run: the helper refuses to skip them.

/** Why a test may skip, and where that is so. */
export const SKIP_REASONS = {
  'no-subgroup-matrix':
    'the adapter has no subgroup matrices of the types the kernel needs (SwiftShader has none; Dawn shows them only with allow_unsafe_apis)',
  'no-onnxruntime':
    'ONNX Runtime is not installed ($MMQ_ORT_DIR or bench/.ort, from bench/install-ort.sh; CI never installs it)',
} as const;

export type SkipReason = keyof typeof SKIP_REASONS;

/** A test allowed to skip for `reason`: its file (relative to the root) and its full name. */
export interface ExpectedSkip {
  reason: SkipReason;
  file: string;
  name: RegExp;
}

/** Every test that may skip, and for which reason; a test not matched here may not skip at all. */
export const EXPECTED_SKIPS: readonly ExpectedSkip[] = [
  // One test per int8 kernel and case on the subgroup-matrix arm (test/kernelHarness.ts perArm).
  { reason: 'no-subgroup-matrix', file: 'test/mmq.gpu.test.ts', name: / \[subgroup-matrix\]$/ },
  { reason: 'no-subgroup-matrix', file: 'test/moe.gpu.test.ts', name: / \[subgroup-matrix\]$/ },
  // Refusal, then skip: the product's refusal is checked before the test skips.
  {
    reason: 'no-subgroup-matrix',
    file: 'test/hello.test.ts',
    name: /^hello kernels on the GPU hello-[\w-]+ subgroup-matrix arm: runs where the adapter has the i8 config/,
  },
  {
    reason: 'no-subgroup-matrix',
    file: 'test/coopmat.test.ts',
    name: /^coopmat-f16 on the GPU subgroup-matrix arm: runs every staging where the adapter has f16->f32/,
  },
  {
    reason: 'no-onnxruntime',
    file: 'test/ort.test.ts',
    name: /^ONNX Runtime CPU EP \(only where bench\/install-ort\.sh ran\) [\w-]+ passes the check/,
  },
];

/**
 * The entry of EXPECTED_SKIPS that allows this skip, if any.
 * @example allowedSkip('test/ort.test.ts', 'ONNX Runtime CPU EP (...) f16 passes the check, ...', 'no-onnxruntime')
 */
export function allowedSkip(file: string, fullName: string, reason: string): ExpectedSkip | undefined {
  return EXPECTED_SKIPS.find((e) => e.reason === reason && e.file === file && e.name.test(fullName));
}
