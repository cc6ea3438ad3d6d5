# FAILS engine/max-num-seqs: each scheduler step holds at most --max-num-batched-tokens tokens, at
# least one per running sequence, so vLLM refuses to start ("max_num_batched_tokens (256) must be
# greater than or equal to max_num_seqs (512).", vllm/config/scheduler.py).
# k3plan check --gpu h100 --command examples/bad/commands/vllm-max-num-seqs-above-batch.sh
vllm serve meta-llama/Llama-3.1-8B-Instruct \
  --max-model-len 8192 \
  --max-num-seqs 512 \
  --max-num-batched-tokens 256 \
  --enable-auto-tool-choice --tool-call-parser llama3_json
