# WARNS memory/concurrency: 256 running requests of 128k tokens need about 25x the KV cache 8 x H100
# hold after Llama 3.1 70B's weights; vLLM starts (one request fits) and queues or preempts the rest
# when prompts are that long.
# k3plan check --gpu h100 --command examples/bad/commands/vllm-max-num-seqs-long-context.sh
vllm serve meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size 8 \
  --max-model-len 131072 \
  --max-num-seqs 256 \
  --enable-auto-tool-choice --tool-call-parser llama3_json
