# NOTES check/no-gpu: a command line does not say what it runs on, and no --gpu was given, so the
# memory, KV-dtype, FP4 and budget rules are skipped (pass --gpu h100).
# k3plan check --command examples/bad/commands/vllm-no-gpu.sh
vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --max-model-len 8192 \
  --enable-auto-tool-choice --tool-call-parser llama3_json
