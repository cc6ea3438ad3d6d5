# WARNS model/unknown: a local checkpoint path names no catalogue model, so the model rules and the
# memory check are skipped; give its config.json with --data DIR (or a deployment file's model:).
# k3plan check --gpu h100 --command examples/bad/commands/vllm-local-checkpoint.sh
vllm serve /models/llama-3.1-70b-instruct-awq \
  --tensor-parallel-size 4 \
  --max-model-len 32768
