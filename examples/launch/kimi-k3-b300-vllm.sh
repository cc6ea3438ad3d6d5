#!/usr/bin/env bash
# Kimi K3 on one 8 x B300 node with vLLM (vllm-project/recipes Kimi-K3, single_node_tp).
# Check it before it runs:  k3plan check --gpu b300 --command examples/launch/kimi-k3-b300-vllm.sh
set -euo pipefail
export VLLM_USE_V2_MODEL_RUNNER=1
vllm serve moonshotai/Kimi-K3 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --trust-remote-code \
  --gpu-memory-utilization 0.95 \
  --max-model-len 131072 \
  --max-num-seqs 16 \
  --kv-cache-dtype fp8 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --host 0.0.0.0 --port 8000
