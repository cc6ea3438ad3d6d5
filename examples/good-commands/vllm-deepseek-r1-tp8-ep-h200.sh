# PASSES: vLLM recipes, DeepSeek-V3 (R1) usage guide, 8xH200 (FP8), Tensor Parallel + Expert Parallel (TP8+EP)
# source: https://docs.vllm.ai/projects/recipes/en/latest/DeepSeek/DeepSeek-V3.html
# k3plan check --gpu h200 --command examples/good-commands/vllm-deepseek-r1-tp8-ep-h200.sh
# ALLOWS model/tool-call-parser: the recipe serves chat only; tool calls need --enable-auto-tool-choice --tool-call-parser deepseek_v3
vllm serve deepseek-ai/DeepSeek-R1-0528 \
  --trust-remote-code \
  --tensor-parallel-size 8 \
  --enable-expert-parallel
