# WARNS model/reasoning-parser: early Qwen3 instructions used vLLM's deepseek_r1 reasoning parser;
# vLLM has a qwen3 parser for Qwen3's <think> blocks (deepseek_r1 mis-splits replies where thinking
# is switched off).
# k3plan check --gpu h200 --command examples/bad/commands/vllm-qwen3-deepseek-reasoning-parser.sh
vllm serve Qwen/Qwen3-235B-A22B \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 32768 \
  --enable-auto-tool-choice --tool-call-parser hermes \
  --reasoning-parser deepseek_r1
