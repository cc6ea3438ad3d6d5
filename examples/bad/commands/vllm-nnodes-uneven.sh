# FAILS engine/nodes: TP 8 x PP 2 is 16 GPUs, which do not split over --nnodes 3 (vLLM starts the
# same number of workers on every node).
# k3plan check --gpu h100 --command examples/bad/commands/vllm-nnodes-uneven.sh
vllm serve meta-llama/Llama-3.1-405B-Instruct \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 3 --node-rank 0 --master-addr 10.0.0.1 \
  --max-model-len 32768 \
  --enable-auto-tool-choice --tool-call-parser llama3_json
