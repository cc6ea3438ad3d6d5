# PASSES: SGLang, DeepSeek V3.1/V3/R1 Support, Example: Serving with two H20*8 nodes ("If you have
# two H100 nodes, the usage is similar"), node 2 (rank 1)
# source: https://github.com/sgl-project/sglang/blob/main/benchmark/deepseek_v3/README.md
# k3plan check --gpu h100 --command examples/good-commands/sglang-deepseek-v3-2x8-node1.sh
# ALLOWS model/tool-call-parser: the guide serves chat only; tool calls need --tool-call-parser deepseekv3
python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 --dist-init-addr 10.0.0.1:5000 --nnodes 2 --node-rank 1 --trust-remote-code
