# PASSES: SGLang, DeepSeek V3.1/V3/R1 Support, Installation & Launch, Using pip (one 8 x H200 node)
# source: https://github.com/sgl-project/sglang/blob/main/benchmark/deepseek_v3/README.md
# k3plan check --gpu h200 --command examples/good-commands/sglang-deepseek-v3-tp8-h200.sh
# ALLOWS model/tool-call-parser: the guide serves chat only; tool calls need --tool-call-parser deepseekv3
python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code
