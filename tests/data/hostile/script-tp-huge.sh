vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 99999999999999999999
