# FAILS model/trust-remote-code: Kimi K2 ships its own tokenizer code (tokenization_kimi.py), so
# transformers refuses to load it unless the engine passes trust_remote_code ("contains custom code
# which must be executed ... pass the argument `trust_remote_code=True`").
# k3plan check --gpu b200 --command examples/bad/commands/vllm-no-trust-remote-code.sh
vllm serve moonshotai/Kimi-K2-Instruct \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 32768 \
  --enable-auto-tool-choice --tool-call-parser kimi_k2
