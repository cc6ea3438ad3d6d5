# FAILS command/value: --gpu-memory-utilization is a fraction (0.95), not a percentage; vLLM refuses
# 95 ("GPU memory utilization must be less than 1.0").
# k3plan check --gpu h100 --command examples/bad/commands/vllm-gpu-memory-percent.sh
vllm serve meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size 8 \
  --gpu-memory-utilization 95 \
  --max-model-len 32768 \
  --enable-auto-tool-choice --tool-call-parser llama3_json
