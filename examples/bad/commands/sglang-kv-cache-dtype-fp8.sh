# FAILS engine/kv-cache-dtype: 'fp8' is vLLM's spelling; SGLang's --kv-cache-dtype only takes
# fp8_e4m3 / fp8_e5m2 (argparse: "argument --kv-cache-dtype: invalid choice: 'fp8'").
# k3plan check --gpu h200 --command examples/bad/commands/sglang-kv-cache-dtype-fp8.sh
python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct \
  --tp 4 --context-length 32768 --tool-call-parser llama3 \
  --kv-cache-dtype fp8
