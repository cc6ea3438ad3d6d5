# WARNS model/tool-call-parser: qwen3_coder is the parser for Qwen3-Coder's XML tool calls; Qwen3-235B
# emits Hermes-style <tool_call> JSON, which SGLang parses with qwen25 (qwen3_coder leaves it as text).
# k3plan check --gpu h200 --command examples/bad/commands/sglang-qwen3-coder-parser.sh
python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8 \
  --context-length 32768 \
  --tool-call-parser qwen3_coder --reasoning-parser qwen3
