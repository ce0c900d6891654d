#!/usr/bin/env bash
# The hardware tier against known-bad kernels: each mutant below is applied to a temporary copy of the tree
# (the working tree is never touched), the tier is bundled from that copy, and the bundle must FAIL on a
# GPU that can show the mutation (issue 27: before the tier, both passed everything but snapshots).
#   scripts/mutate-hw.sh build        here: .gpu/bench/tier-mut-NAME.mjs for every mutant (build-carry.sh calls it)
#   scripts/mutate-hw.sh run [OUT]    run every built mutant (node: $NODE, default node; bundles in $RUN,
#                                     default .gpu/bench); writes OUT/tier-mut-NAME.json and .log, and exits 1
#                                     if a mutant SURVIVED (every row passed). bench/h200.sh's `mutants` step.
#   scripts/mutate-hw.sh              both, here (on SwiftShader only the control is killed: no subgroup
#                                     matrices, and a compiler that never contracts; test/noFuse.spirv.test.ts
#                                     covers no_fuse in CI)
# Mutants (NAME@@FILE@@FROM@@TO@@ROWS; FROM must occur exactly once; ROWS: the tier's --filter, the rows
# that can show it, so the GPU's time goes to them):
#   a-fragment-offset: the int8 matrix arm's A fragment of M-subtile sm starts at row sm*8 of the staged
#     tile instead of sm*16: every output row r with (r mod BM) >= 16 reads the wrong activation rows.
#   no-fuse-identity: no_fuse returns its argument, so a contracting compiler (NVIDIA's) fuses the epilogue
#     multiply into the add and the int8 kernels stop matching their oracles bit for bit.
#   b-fragment-offset: the same for the B fragment of N-subtile sn: columns (c mod BN) >= 16.
#   hello-matrix-pad: hello-wmma's matrix arm on an adapter whose i8 config has K = 32 (the H200's) stages
#     one word of the next row into the zero padding of A and B^T, which then adds into every sum.
#   f16-round-trip-unguarded: round_f16x2 without its nofuse_zero, so NVIDIA folds the pack/unpack pair and the
#     f16 twins' scalar in-gemm and stream rows lose the f16 rounding of B (1.5e-4 of max off their oracles).
#   split-k-matrix-part: the coopmat split stagings' matrix arm reads K stage kb instead of ks0 + kb: every
#     K part but the first sums the first part's products again (snapshots alone saw it: SwiftShader has
#     no subgroup matrices).
#   microtile-matrix-b-block: the micro-tile schedule's matrix arm loads the B fragment of the stage's
#     other 32-block: every block's product pairs A with the wrong weights (SwiftShader has no subgroup
#     matrices, so only a GPU shows it).
#   control-scalar-a-row: the scalar and dp4a arms read the staged A row gmm ^ 1: a positive control that
#     any adapter kills (the shared-staging int8 families fail on those arms), so a run shows the harness works.
set -euo pipefail
cd "$(dirname "$0")/.."
MUTANTS=(
  'a-fragment-offset@@src/kernels/mmq/mmq.wgsl.ts@@(&sa, sm * 16u * 8u, 8u)@@(&sa, sm * 8u * 8u, 8u)@@/subgroup-matrix'
  "no-fuse-identity@@src/kernels/mmq/mmq.wgsl.ts@@'  return bitcast<f32>(bitcast<u32>(x) | nofuse_zero);',@@'  return x;',@@^(mmq|moe)-"
  'b-fragment-offset@@src/kernels/mmq/mmq.wgsl.ts@@(&sb, sn * 16u * 8u, 8u)@@(&sb, sn * 8u * 8u, 8u)@@/subgroup-matrix'
  'hello-matrix-pad@@src/kernels/hello/hello.wgsl.ts@@    if (w < K / 4u) {@@    if (w <= K / 4u) {@@^hello-wmma/subgroup-matrix'
  'f16-round-trip-unguarded@@src/kernels/quant/q4k.wgsl.ts@@pack2x16float(x) | nofuse_zero@@pack2x16float(x)@@^(coopmat-f16|moe-q4k-id)/scalar'
  'split-k-matrix-part@@src/kernels/coopmat/coopmat.operands.ts@@(spec.ksplit ?? 1) > 1 || stagingOf(spec).stream ? `ks0 + ${kb}` : kb;@@stagingOf(spec).stream ? `ks0 + ${kb}` : kb;@@^coopmat-f16/subgroup-matrix/(prepass|fused-prepass|in-gemm)$'
  'microtile-matrix-b-block@@src/kernels/mmq/mmq.microtile.ts@@(buf * BN + warp_n * RN * 16u + jn * 16u) * SV * 4u + 8u * b,@@(buf * BN + warp_n * RN * 16u + jn * 16u) * SV * 4u + 8u * (1u - b),@@^mmq-q4k-tile/subgroup-matrix/microtile'
  "control-scalar-a-row@@src/kernels/mmq/mmq.wgsl.ts@@'sa[gmm * 8u + w]'@@'sa[(gmm ^ 1u) * 8u + w]'@@^mmq-q8-tiled/"
)

build() {
  local commit tmp
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  mkdir -p .gpu/bench
  for m in "${MUTANTS[@]}"; do
    IFS=$'\x1f' read -r name file from to _ <<<"${m//@@/$'\x1f'}"
    tmp=$(mktemp -d)
    tar -c --exclude=bench/.ort --exclude=__pycache__ src test bench package.json tsconfig.json | tar -x -C "$tmp"
    ln -s "$PWD/node_modules" "$tmp/node_modules"
    FROM="$from" TO="$to" python3 - "$tmp/$file" <<'EOF'
import os, sys
path = sys.argv[1]
text = open(path).read()
n = text.count(os.environ['FROM'])
if n != 1:
    sys.exit(f'{path}: the mutant text occurs {n} times, not once')
open(path, 'w').write(text.replace(os.environ['FROM'], os.environ['TO']))
EOF
    (cd "$tmp" && npx esbuild test/hw/main.ts --bundle --platform=node --format=esm --target=node20 \
      --external:webgpu --define:MMQ_BUILD_COMMIT="'$commit+mutant:$name'" \
      --outfile="$OLDPWD/.gpu/bench/tier-mut-$name.mjs" --log-level=warning)
    rm -rf "$tmp"
    echo "[mutate-hw] built .gpu/bench/tier-mut-$name.mjs ($file: '$from' -> '$to')"
  done
}

run() {
  local out=${1:-bench-out} node=${NODE:-node} dir=${RUN:-.gpu/bench} rc=0 name rows
  mkdir -p "$out"
  for m in "${MUTANTS[@]}"; do
    name=${m%%@@*}
    rows=${m##*@@}
    if [ ! -f "$dir/tier-mut-$name.mjs" ]; then
      echo "[mutate-hw] no $dir/tier-mut-$name.mjs: run scripts/mutate-hw.sh build (bench/build-carry.sh does)"
      rc=1
      continue
    fi
    # --expect-fail: exit 0 when some row fails (the mutant is killed), 1 when every row passes.
    local code=0
    "$node" "$dir/tier-mut-$name.mjs" --expect-fail --filter "$rows" --json "$out/tier-mut-$name.json" "${@:2}" \
      > "$out/tier-mut-$name.log" 2>&1 || code=$?
    case $code in
      0) echo "[mutate-hw] $name: KILLED" ;;
      3) echo "[mutate-hw] $name: NOT TESTED here (no row matching '$rows' runs on this adapter)"; rc=1 ;;
      *) echo "[mutate-hw] $name: SURVIVED (exit $code; see $out/tier-mut-$name.log)"; rc=1 ;;
    esac
    grep -E '^(fail|\[tier\] [0-9])|^    (fail|error|invalid) ' "$out/tier-mut-$name.log" | head -40 || true
  done
  return $rc
}

case "${1:-all}" in
  build) build ;;
  run) shift; run "$@" ;;
  all) build; run bench-out ;;
  *) echo "usage: scripts/mutate-hw.sh [build | run [OUT] | all]"; exit 2 ;;
esac
