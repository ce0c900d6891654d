#!/usr/bin/env bash
# Build the carry kit for running the bench on a lent GPU machine without node (see docs/benchmarks.md):
#   .gl/   the Vulkan loader and the glvnd libraries that machine lacks (amd64 .debs; with libvulkan1 alone
#          the loader cannot load NVIDIA's ICD, libGLX_nvidia.so.0: `git show lab-final:docs/benchmarks.md`,
#          "H200 probe")
#   .gpu/bench/  node.xz (this machine's node, xz'ed), webgpu/ (index.js, package.json, linux-x64 dawn.node.xz),
#          zstd/, bench.mjs, apptune.mjs, probe.mjs and ort-bench.mjs (esbuild bundles with `webgpu` left external),
#          ort/ (optional: onnxruntime-node's JS and linux-x64 binaries, libonnxruntime.so.1 xz'ed, from bench/.ort)
# All three folders are git-ignored; `run` carries them (64 MiB limit in all).
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
# zstd(1) and the libraries it links (the sass step decodes the driver's shader cache with it when the
# image's pyarrow cannot).
mkdir -p .gpu/bench/zstd
cp "$(command -v zstd)" $(ldd "$(command -v zstd)" | awk '/liblzma|liblz4/{print $3}') .gpu/bench/zstd/
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
# lab.ts exists only while an experiment is under way (docs/benchmarks.md names the commits).
for entry in bench apptune probe ort-bench $([ -f bench/lab.ts ] && echo lab); do
  npx esbuild "bench/$entry.ts" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --outfile=".gpu/bench/$entry.mjs" --log-level=warning
done
du -sh .gl .gpu/bench
