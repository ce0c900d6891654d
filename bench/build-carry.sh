#!/usr/bin/env bash
# Build the carry kit for running the bench and the hardware tier on a lent GPU machine without node (see
# docs/benchmarks.md and docs/hardware.md):
#   .gl/   the Vulkan loader and the glvnd libraries that machine lacks (amd64 .debs; with libvulkan1 alone
#          the loader cannot load NVIDIA's ICD, libGLX_nvidia.so.0: `git show lab-final:docs/benchmarks.md`,
#          "H200 probe")
#   .gpu/bench/  node.xz (this machine's node, xz'ed), webgpu/ (index.js, package.json, linux-x64 dawn.node.xz),
#          bench.mjs, ort-bench.mjs, model.mjs (`mmq model`) and tier.mjs (esbuild bundles with `webgpu` left
#          external), tier-mut-*.mjs
#          (the tier with one mutation each, scripts/mutate-hw.sh), ort/ (optional: onnxruntime-node's JS and
#          linux-x64 binaries, libonnxruntime.so.1 xz'ed, from bench/.ort), llama-bench.mjs and llama/
#          (optional: llama.cpp's Vulkan harness and its ggml libraries xz'ed, from bench/.llama)
# All three folders are git-ignored; `run` carries them (64 MiB limit in all; the script prints the size).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gl .gpu/bench/webgpu/dist/linux-x64
GL_DEBS="libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libgles2 libopengl0"
missing=""
for d in $GL_DEBS; do ls .gl/"${d}"_*_amd64.deb >/dev/null 2>&1 || missing="$missing $d"; done
if [ -n "$missing" ]; then
  mkdir -p /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update >/dev/null
  # shellcheck disable=SC2086
  (cd .gl && apt-get $o download $missing)
fi
[ -s .gpu/bench/node.xz ] || xz -T2 -3 -c "$(command -v node)" > .gpu/bench/node.xz
cp node_modules/webgpu/index.js node_modules/webgpu/package.json .gpu/bench/webgpu/
[ -s .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz ] ||
  xz -T2 -6 -c node_modules/webgpu/dist/linux-x64/dawn.node > .gpu/bench/webgpu/dist/linux-x64/dawn.node.xz
# Bundles of steps whose sources are gone (apptune, probe, lab) and the sass step's zstd go.
rm -rf .gpu/bench/zstd .gpu/bench/apptune.mjs .gpu/bench/probe.mjs .gpu/bench/lab.mjs
# ONNX Runtime for the bench's ORT rows (bench/ort.ts), only when bench/install-ort.sh has put it in bench/.ort:
# onnxruntime-node's package.json and dist/*.js, its linux-x64 binding and libonnxruntime.so.1 (~46 MB, xz'ed to
# ~13 MB; h200.sh unpacks it and points MMQ_ORT_DIR at it), and onnxruntime-common's CommonJS build. The
# binding finds the library beside itself (RUNPATH $ORIGIN).
ORT_SRC=bench/.ort/node_modules
ORT_KIT=.gpu/bench/ort/node_modules
if [ -f "$ORT_SRC/onnxruntime-node/package.json" ]; then
  bin=bin/napi-v6/linux/x64
  mkdir -p "$ORT_KIT/onnxruntime-node/dist" "$ORT_KIT/onnxruntime-node/$bin" "$ORT_KIT/onnxruntime-common/dist/cjs"
  cp "$ORT_SRC/onnxruntime-node/package.json" "$ORT_KIT/onnxruntime-node/"
  cp "$ORT_SRC"/onnxruntime-node/dist/*.js "$ORT_KIT/onnxruntime-node/dist/"
  cp "$ORT_SRC/onnxruntime-node/$bin/onnxruntime_binding.node" "$ORT_KIT/onnxruntime-node/$bin/"
  so="$ORT_SRC/onnxruntime-node/$bin/libonnxruntime.so.1"
  [ -s "$ORT_KIT/onnxruntime-node/$bin/libonnxruntime.so.1.xz" ] && [ ! "$so" -nt "$ORT_KIT/onnxruntime-node/$bin/libonnxruntime.so.1.xz" ] ||
    xz -T2 -6 -c "$so" > "$ORT_KIT/onnxruntime-node/$bin/libonnxruntime.so.1.xz"
  cp "$ORT_SRC/onnxruntime-common/package.json" "$ORT_KIT/onnxruntime-common/"
  cp "$ORT_SRC"/onnxruntime-common/dist/cjs/*.js "$ORT_SRC/onnxruntime-common/dist/cjs/package.json" \
    "$ORT_KIT/onnxruntime-common/dist/cjs/"
  echo "ONNX Runtime $(node -p "require('./$ORT_SRC/onnxruntime-node/package.json').version") in the kit"
else
  rm -rf .gpu/bench/ort
  echo "no bench/.ort: the kit carries no ONNX Runtime (bench/install-ort.sh adds it; the bench then skips its ORT rows)"
fi
# llama.cpp's Vulkan backend for the bench's llama.cpp rows (bench/llama.ts), only when bench/install-llama.sh has
# built it in bench/.llama: the harness (bin/mmq-llama, RUNPATH \$ORIGIN/../lib), libggml-base.so and
# libggml-vulkan.so (~44 MB, xz'ed to ~5 MB; h200.sh unpacks them and points MMQ_LLAMA_DIR at them) and
# VERSION.json. Not lavapipe: the GPU machine has its driver.
LLAMA_SRC=bench/.llama
LLAMA_KIT=.gpu/bench/llama
if [ -x "$LLAMA_SRC/bin/mmq-llama" ]; then
  mkdir -p "$LLAMA_KIT/bin" "$LLAMA_KIT/lib"
  cp "$LLAMA_SRC/bin/mmq-llama" "$LLAMA_KIT/bin/"
  # install-llama.sh copies the libraries afresh each run: compress them again only for another release.
  cmp -s "$LLAMA_SRC/VERSION.json" "$LLAMA_KIT/VERSION.json" || rm -f "$LLAMA_KIT"/lib/*.xz
  for so in libggml-base.so libggml-vulkan.so; do
    [ -s "$LLAMA_KIT/lib/$so.xz" ] || xz -T2 -6 -c "$LLAMA_SRC/lib/$so" > "$LLAMA_KIT/lib/$so.xz"
  done
  cp "$LLAMA_SRC/VERSION.json" "$LLAMA_KIT/"
  echo "llama.cpp $(cat "$LLAMA_SRC/VERSION.json") in the kit"
else
  rm -rf "$LLAMA_KIT"
  echo "no bench/.llama: the kit carries no llama.cpp (bench/install-llama.sh adds it; the bench then skips its llama.cpp rows)"
fi
for entry in bench ort-bench llama-bench; do
  npx esbuild "bench/$entry.ts" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --outfile=".gpu/bench/$entry.mjs" --log-level=warning
done
# `mmq model` (a whole model's GEMMs, cli/model.ts) with its worker core in its own process: the kit has
# no tsx for the CLI's GPU child process. h200.sh's `model` step runs it.
npx esbuild cli/modelKit.ts --bundle --platform=node --format=esm --target=node20 \
  --external:webgpu --outfile=.gpu/bench/model.mjs --log-level=warning
# The hardware tier (`npm run test:gpu`), stamped with the commit it was built from (a tree with changes to
# src/ or test/ is marked +dirty), and its mutants.
commit="$(git rev-parse --short HEAD)$(git status --porcelain -- src test | grep -q . && echo +dirty || true)"
npx esbuild test/hw/main.ts --bundle --platform=node --format=esm --target=node20 --external:webgpu \
  --define:MMQ_BUILD_COMMIT="'$commit'" --outfile=.gpu/bench/tier.mjs --log-level=warning
bash scripts/mutate-hw.sh build
du -sh .gl .gpu/bench
du -cb .gl .gpu/bench | awk 'END { printf "kit: %.1f MiB of the 64 MiB carry limit\n", $1 / 1048576 }'
