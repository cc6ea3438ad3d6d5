# FAILS command/model: the model flag was lost when the line was templated; SGLang's argparse
# requires it ("the following arguments are required: --model-path/--model").
# k3plan check --gpu h200 --command examples/bad/commands/sglang-no-model.sh
python3 -m sglang.launch_server --tp 8 --trust-remote-code --host 0.0.0.0 --port 30000
