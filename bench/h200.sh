#!/usr/bin/env bash
# Entry point of a `run` on the lent NVIDIA machine (carry .gl and .gpu/bench, built by bench/build-carry.sh).
# Usage: bench/h200.sh STEP...   STEP = vkdebug | torch[:M,N,K or M1/M2/..,N,K, and/or --no-moe | --moe-only, '+' between]
#   | bench[:ARGS with '+' for spaces]
#   | ort[:ARGS] (ONNX Runtime's WebGPU MatMulNBits alone, bench/ort-bench.ts; the kit's ort/ when it has one)
#   | llama[:ARGS] (llama.cpp's Vulkan mul_mat / mul_mat_id alone, bench/llama-bench.ts; the kit's llama/)
#   | tier[:ARGS] (the hardware tier, test/hw/main.ts: every family x arm x choice in full vs its oracle: tier.json)
#   | model[:ARGS] (`mmq model` ARGS, cli/model.ts: a model's GEMMs picked and timed, model.json, e.g.
#     model:--preset+llama-3.1-8b+--m+512+--decode+--yes)
#   | mutants[:ARGS] (the tier built with each mutation of scripts/mutate-hw.sh; each must fail: tier-mut-*.json)
#   | node:FILE.mjs[:ARGS] (another bundle of the kit with --json NAME.json, e.g. an older commit's bench)
# Logs and JSON go to $OUT (the device tool's return folder), else bench-out/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
RUN=/tmp/mmqrun
mkdir -p $RUN/node_modules/webgpu/dist/linux-x64
[ -x /tmp/node ] || { xz -dc .gpu/bench/node.xz > /tmp/node && chmod +x /tmp/node; }
cp .gpu/bench/webgpu/index.js .gpu/bench/webgpu/package.json $RUN/node_modules/webgpu/
[ -s $RUN/node_modules/webgpu/dist/linux-x64/dawn.node ] ||
  xz -dc .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz > $RUN/node_modules/webgpu/dist/linux-x64/dawn.node
cp .gpu/bench/*.mjs $RUN/
# ONNX Runtime (optional part of the kit, bench/build-carry.sh): unpacked once into its own folder, which
# MMQ_ORT_DIR names for bench/ort.ts; without it the bench says "ONNX Runtime not installed" and carries on.
unpack_ort() {
  [ -n "${MMQ_ORT_DIR:-}" ] && return 0
  if [ ! -d .gpu/bench/ort/node_modules/onnxruntime-node ]; then
    echo "[h200] no ONNX Runtime in the kit (.gpu/bench/ort): the bench's ORT rows are skipped"
    return 0
  fi
  local dir=/tmp/mmqort bin=node_modules/onnxruntime-node/bin/napi-v6/linux/x64
  mkdir -p $dir
  cp -r .gpu/bench/ort/node_modules $dir/
  rm -f $dir/$bin/libonnxruntime.so.1.xz
  xz -dc .gpu/bench/ort/$bin/libonnxruntime.so.1.xz > $dir/$bin/libonnxruntime.so.1
  export MMQ_ORT_DIR=$dir
  echo "[h200] ONNX Runtime unpacked to $MMQ_ORT_DIR"
}
# llama.cpp's Vulkan harness (optional part of the kit, bench/build-carry.sh): unpacked once, MMQ_LLAMA_DIR names
# it for bench/llama.ts; without it the bench says "llama.cpp Vulkan not installed" and carries on.
unpack_llama() {
  [ -n "${MMQ_LLAMA_DIR:-}" ] && return 0
  if [ ! -x .gpu/bench/llama/bin/mmq-llama ]; then
    echo "[h200] no llama.cpp in the kit (.gpu/bench/llama): the bench's llama.cpp rows are skipped"
    return 0
  fi
  local dir=/tmp/mmqllama so
  mkdir -p $dir/bin $dir/lib
  cp .gpu/bench/llama/bin/mmq-llama $dir/bin/
  cp .gpu/bench/llama/VERSION.json $dir/
  for so in libggml-base.so libggml-vulkan.so; do
    [ -s $dir/lib/$so ] || xz -dc .gpu/bench/llama/lib/$so.xz > $dir/lib/$so
  done
  export MMQ_LLAMA_DIR=$dir
  echo "[h200] llama.cpp unpacked to $MMQ_LLAMA_DIR: $($dir/bin/mmq-llama --version 2>&1)"
}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
  ldconfig -p | grep libvulkan
  /tmp/node --version
  cat "$VK_DRIVER_FILES"
  lib=$(ldconfig -p | awk '/libGLX_nvidia.so.0/{print $NF; exit}')
  echo "libGLX_nvidia: $lib"; [ -n "$lib" ] && ldd "$lib" | grep -i "not found"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
rc=0
# A step's n-th run in one command writes NAME<n>.json / .log (n > 1): bench2.json, tier2.log.
declare -A runs
suffix() { runs[$1]=$((${runs[$1]:-0} + 1)); sfx=$([ "${runs[$1]}" -gt 1 ] && echo "${runs[$1]}"); }
# Clocks, power, throttle reasons, P-state, utilization and the memory in use on the whole GPU, every SMI_MS
# (default 500) ms for the whole command: rows ran several times slower at full clocks
# (docs/decisions/0006-timing-method.md), and another process on the GPU would show as utilization or memory
# this command does not account for.
# bench/clocks.ts reads the first two columns; the others are appended so older logs parse alike.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active,pstate,utilization.gpu,utilization.memory,memory.used \
  --format=csv -lms "${SMI_MS:-500}" > "$OUT/smi.csv" 2>&1 &
smi=$!
# The compute processes the driver shows (in a container, usually only this one's).
nvidia-smi --query-compute-apps=timestamp,pid,process_name,used_memory --format=csv -lms 2000 > "$OUT/apps.csv" 2>&1 &
apps=$!
trap 'kill $smi $apps 2>/dev/null' EXIT
for step in "$@"; do
  case "$step" in
    vkdebug) VK_LOADER_DEBUG=error,warn,driver /tmp/node $RUN/tier.mjs --adapter-only > "$OUT/vkdebug.log" 2>&1; tail -40 "$OUT/vkdebug.log" ;;
    torch*)
      # torch:M,N,K times that one shape only (M1/M2/...,N,K: those rows counts at N x K); the MoE timings
      # follow unless --no-moe (torch:--moe-only: those alone).
      shape=${step#torch}; shape=${shape#:}; shape=${shape//+/ }
      # shellcheck disable=SC2086
      PYTHONUNBUFFERED=1 python3 bench/torch_baseline.py "$OUT/torch.json" $shape 2>&1 | tee "$OUT/torch.log" || rc=1 ;;
    bench*)
      args=${step#bench}; args=${args#:}; args=${args//+/ }
      suffix bench
      unpack_ort
      unpack_llama
      # shellcheck disable=SC2086
      /tmp/node $RUN/bench.mjs --json "$OUT/bench$sfx.json" --torch "$OUT/torch.json" $args 2>&1 | tee "$OUT/bench$sfx.log" || rc=1 ;;
    ort*)
      args=${step#ort}; args=${args#:}; args=${args//+/ }
      suffix ort
      unpack_ort
      # shellcheck disable=SC2086
      /tmp/node $RUN/ort-bench.mjs --json "$OUT/ort$sfx.json" $args 2>&1 | tee "$OUT/ort$sfx.log" || rc=1 ;;
    llama*)
      args=${step#llama}; args=${args#:}; args=${args//+/ }
      suffix llama
      unpack_llama
      # shellcheck disable=SC2086
      /tmp/node $RUN/llama-bench.mjs --json "$OUT/llama$sfx.json" $args 2>&1 | tee "$OUT/llama$sfx.log" || rc=1 ;;
    mutants*)
      # After `tier`: the same tier on each mutant's bundle; a mutant that passes every row SURVIVED (rc 1).
      args=${step#mutants}; args=${args#:}; args=${args//+/ }
      # shellcheck disable=SC2086
      NODE=/tmp/node RUN=$RUN bash scripts/mutate-hw.sh run "$OUT" $args 2>&1 | tee "$OUT/mutants.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    model*)
      args=${step#model}; args=${args#:}; args=${args//+/ }
      suffix model
      # shellcheck disable=SC2086
      /tmp/node $RUN/model.mjs --json "$OUT/model$sfx.json" $args 2>&1 | tee "$OUT/model$sfx.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    tier*)
      args=${step#tier}; args=${args#:}; args=${args//+/ }
      suffix tier
      # shellcheck disable=SC2086
      /tmp/node $RUN/tier.mjs --json "$OUT/tier$sfx.json" $args 2>&1 | tee "$OUT/tier$sfx.log"
      [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
    node:*)
      # node:FILE.mjs[:ARGS]: another bundle in the kit, e.g. an older commit's bench for a same-command
      # comparison (`git worktree add ... TAG`, esbuild its bench/bench.ts to .gpu/bench/bench-TAG.mjs).
      spec=${step#node:}; file=${spec%%:*}; args=${spec#"$file"}; args=${args#:}; args=${args//+/ }
      name=${file%.mjs}
      suffix "$name"
      # shellcheck disable=SC2086
      /tmp/node "$RUN/$file" --json "$OUT/$name$sfx.json" $args 2>&1 | tee "$OUT/$name$sfx.log" || rc=1 ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
done
exit $rc
