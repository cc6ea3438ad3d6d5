# FAILS engine/reasoning-parser: 'deepseek-r1' (hyphen) is SGLang's reasoning parser name; vLLM
# registers 'deepseek_r1' and refuses the other spelling at start-up.
# k3plan check --gpu h200 --command examples/bad/commands/vllm-sglang-reasoning-parser.sh
vllm serve deepseek-ai/DeepSeek-R1 \
  --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 32768 \
  --enable-auto-tool-choice --tool-call-parser deepseek_v3 \
  --reasoning-parser deepseek-r1
