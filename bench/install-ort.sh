#!/usr/bin/env bash
# Install ONNX Runtime for the bench only (bench/ort.ts loads it from here; never an app dependency, never in
# CI's `npm ci`): onnxruntime-node 1.30's Linux x64 binary carries a WebGPU execution provider with its own
# Dawn. bench/.ort is git-ignored; bench/build-carry.sh packs it for the lent GPU machine.
#   bench/install-ort.sh [VERSION]   (default 1.30.0)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-1.30.0}
# The package's install script fetches CUDA binaries from outside the npm registry on some platforms: the
# bench uses the WebGPU EP only, so skip it (the registry tarball carries the CPU/WebGPU binaries).
ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
  npm install --no-save --no-audit --no-fund --prefix bench/.ort "onnxruntime-node@$version"
node -e "console.log('onnxruntime-node', require('./bench/.ort/node_modules/onnxruntime-node/package.json').version, 'in bench/.ort')"
