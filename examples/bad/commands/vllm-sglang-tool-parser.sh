# FAILS engine/tool-call-parser: 'llama3' is SGLang's name for the Llama 3.1 tool-call parser; vLLM
# registers it as 'llama3_json' and refuses to start ("invalid tool call parser: llama3").
# k3plan check --gpu h100 --command examples/bad/commands/vllm-sglang-tool-parser.sh
vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --max-model-len 8192 \
  --enable-auto-tool-choice \
  --tool-call-parser llama3
