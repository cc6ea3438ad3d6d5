# WARNS engine/nnodes: TP 16 is two 8 x H100 nodes, but the node flags of SGLang's two-node DeepSeek
# recipe were dropped: without --nnodes 2 --node-rank R --dist-init-addr HEAD:PORT each node starts
# its own 16-rank group and waits for 8 GPUs it does not have.
# k3plan check --gpu h100 --command examples/bad/commands/sglang-multinode-no-nnodes.sh
python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 --trust-remote-code \
  --context-length 32768 --tool-call-parser deepseekv3
