# PASSES: SGLang docs, Multi-Node Deployment, Llama 3.1 405B, Run 405B (fp16) on Two Nodes (first node)
# source: https://docs.sglang.io/references/multi_node_deployment/multi_node.html
# k3plan check --gpu h100 --command examples/good-commands/sglang-llama-3.1-405b-2x8-node0.sh
# ALLOWS model/tool-call-parser: the guide serves chat only; tool calls need --tool-call-parser llama3
# replace 172.16.4.52:20000 with your own node ip address and port of the first node
python3 -m sglang.launch_server \
  --model-path meta-llama/Meta-Llama-3.1-405B-Instruct \
  --tp 16 \
  --dist-init-addr 172.16.4.52:20000 \
  --nnodes 2 \
  --node-rank 0
