# WARNS engine/pp-layer-partition-env: SGLang reads SGLANG_PP_LAYER_PARTITION; the vLLM variable
# set here is ignored, so the release's own split (20 layers per stage) runs, not 19,21,21,19.
# k3plan check --gpu h100 --command examples/bad/commands/sglang-vllm-layer-partition.sh
export VLLM_PP_LAYER_PARTITION=19,21,21,19
python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct \
  --tp-size 2 --pp-size 4 \
  --context-length 8192 \
  --tool-call-parser llama3
