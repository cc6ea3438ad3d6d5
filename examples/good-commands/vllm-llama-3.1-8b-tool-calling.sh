# PASSES: vLLM docs, Tool Calling, Quickstart (Llama 3.1 8B with the llama3_json parser)
# source: https://docs.vllm.ai/en/v0.9.0/features/tool_calling.html
# k3plan check --gpu h100 --command examples/good-commands/vllm-llama-3.1-8b-tool-calling.sh
vllm serve meta-llama/Llama-3.1-8B-Instruct \
    --enable-auto-tool-choice \
    --tool-call-parser llama3_json \
    --chat-template examples/tool_chat_template_llama3.1_json.jinja
