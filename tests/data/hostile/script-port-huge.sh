vllm serve meta-llama/Llama-3.1-8B-Instruct --port 70000
