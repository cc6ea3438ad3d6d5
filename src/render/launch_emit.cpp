// Shell scripts and LeaderWorkerSet manifests for a launch plan. Every user string goes through
// shell_quote / yaml_quote; in Kubernetes args `$(` is escaped as `$$(` so the kubelet does not
// expand variables hidden in a model path.
#include <fmt/format.h>

#include <cctype>
#include <k3plan/launch.hpp>

namespace k3plan {

namespace {

std::string sglang_kv(const std::string& d) {
  if (d == "fp8") return "fp8_e4m3";
  if (d == "bf16" || d == "fp16" || d == "auto") return "auto";
  return d;
}
std::string vllm_kv(const std::string& d) {
  if (d == "fp8_e4m3") return "fp8";
  if (d == "bf16" || d == "fp16") return "auto";
  return d;
}

// Plain words stay bare for readability; anything else is single-quoted.
std::string shell_word(const std::string& s) {
  if (s.empty()) return "''";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' || c == '%' ||
          c == '='))
      return shell_quote(s);
  }
  return s;
}

std::string k8s_escape(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    o += s[i];
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '(') o += '$';
  }
  return o;
}

}  // namespace

LaunchPlan make_launch_plan(const Deployment& d, const Model& m, const Layout& l, int gpus, int nodes, int gpus_per_node,
                            std::int64_t context, double memory_fraction) {
  LaunchPlan p;
  p.deployment = d;
  p.model_id = m.id;
  p.gpus = gpus;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  const std::string model_path = !d.model_path.empty() ? d.model_path : (!m.hf_repo.empty() ? m.hf_repo : d.model);
  const int port = d.port > 0 ? d.port : d.default_port();
  const std::string head = d.head_address.empty() ? "${HEAD_ADDR}" : d.head_address;
  p.health_url = fmt::format("http://{}:{}/v1/models", d.host == "0.0.0.0" ? "127.0.0.1" : d.host, port);
  for (int r = 0; r < nodes; ++r) {
    NodeCommand c;
    c.rank = r;
    std::vector<std::string>& a = c.argv;
    if (d.engine == Engine::sglang) {
      p.ready_line = "The server is fired up and ready to roll!";
      a = {"python3", "-m", "sglang.launch_server", "--model-path", model_path, "--tp-size", std::to_string(l.tp)};
      if (l.ep > 1) a.insert(a.end(), {"--ep-size", std::to_string(l.ep)});
      if (l.pp > 1) a.insert(a.end(), {"--pp-size", std::to_string(l.pp)});
      if (l.dp > 1) a.insert(a.end(), {"--dp-size", std::to_string(l.dp)});
      if (l.dp_attention) a.push_back("--enable-dp-attention");
      if (l.dcp > 1) a.insert(a.end(), {"--dcp-size", std::to_string(l.dcp)});
      a.insert(a.end(), {"--mem-fraction-static", fmt::format("{:.3f}", memory_fraction), "--context-length", std::to_string(context),
                         "--max-running-requests", std::to_string(d.max_num_seqs ? *d.max_num_seqs : d.users), "--kv-cache-dtype",
                         sglang_kv(d.kv_dtype)});
      if (d.chunked_prefill_size) a.insert(a.end(), {"--chunked-prefill-size", std::to_string(*d.chunked_prefill_size)});
      if (d.cuda_graph_max_bs) a.insert(a.end(), {"--cuda-graph-max-bs", std::to_string(*d.cuda_graph_max_bs)});
      if (m.engine.trust_remote_code) a.push_back("--trust-remote-code");
      if (!m.engine.tool_call_parser.empty()) a.insert(a.end(), {"--tool-call-parser", m.engine.tool_call_parser});
      if (!m.engine.reasoning_parser.empty()) a.insert(a.end(), {"--reasoning-parser", m.engine.reasoning_parser});
      if (!d.served_model_name.empty()) a.insert(a.end(), {"--served-model-name", d.served_model_name});
      if (nodes > 1)
        a.insert(a.end(), {"--nnodes", std::to_string(nodes), "--node-rank", std::to_string(r), "--dist-init-addr", head + ":20000"});
      a.insert(a.end(), {"--host", d.host, "--port", std::to_string(port)});
    } else {
      p.ready_line = "Application startup complete.";
      a = {"vllm", "serve", model_path, "--tensor-parallel-size", std::to_string(l.tp), "--pipeline-parallel-size", std::to_string(l.pp)};
      if (l.dp > 1) a.insert(a.end(), {"--data-parallel-size", std::to_string(l.dp)});
      if (m.moe && l.ep > 1) a.push_back("--enable-expert-parallel");
      if (l.dcp > 1) a.insert(a.end(), {"--decode-context-parallel-size", std::to_string(l.dcp)});
      a.insert(a.end(), {"--gpu-memory-utilization", fmt::format("{:.2f}", memory_fraction), "--max-model-len", std::to_string(context),
                         "--kv-cache-dtype", vllm_kv(d.kv_dtype)});
      if (d.max_num_seqs) a.insert(a.end(), {"--max-num-seqs", std::to_string(*d.max_num_seqs)});
      if (d.max_num_batched_tokens) a.insert(a.end(), {"--max-num-batched-tokens", std::to_string(*d.max_num_batched_tokens)});
      if (m.engine.trust_remote_code) a.push_back("--trust-remote-code");
      if (!m.engine.tool_call_parser.empty())
        a.insert(a.end(), {"--enable-auto-tool-choice", "--tool-call-parser", m.engine.tool_call_parser});
      if (!m.engine.reasoning_parser.empty()) a.insert(a.end(), {"--reasoning-parser", m.engine.reasoning_parser});
      if (!d.served_model_name.empty()) a.insert(a.end(), {"--served-model-name", d.served_model_name});
      if (nodes > 1) {
        if (l.dp > 1) {
          // DP + EP across nodes: one `vllm serve` per node, DP ranks split evenly
          const int local = l.dp / nodes;
          a.insert(a.end(), {"--data-parallel-size-local", std::to_string(local), "--data-parallel-address", head,
                             "--data-parallel-rpc-port", "13345"});
          if (r > 0) a.insert(a.end(), {"--data-parallel-start-rank", std::to_string(r * local), "--headless"});
        } else {
          a.insert(a.end(), {"--nnodes", std::to_string(nodes), "--node-rank", std::to_string(r), "--master-addr", head});
          if (r > 0) a.push_back("--headless");
        }
      }
      a.insert(a.end(), {"--host", d.host, "--port", std::to_string(port)});
    }
    if (nodes > 1) c.env = {"GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}", "NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}"};
    p.nodes_cmd.push_back(c);
  }
  return p;
}

std::string emit_shell(const LaunchPlan& p, int only_rank) {
  const Deployment& d = p.deployment;
  std::string s = "#!/usr/bin/env bash\n";
  s += fmt::format("# Generated by k3plan for {} on {} x {} ({} node{}); checked with `k3plan fit` first.\n", p.model_id, p.gpus, d.gpu,
                   p.nodes, p.nodes > 1 ? "s" : "");
  s += fmt::format("# Ready when the server prints: {}\n", p.ready_line);
  s += fmt::format("# Health check: curl -sf {}\n", p.health_url);
  s += "set -euo pipefail\n";
  if (only_rank < 0) {
    s += fmt::format("NODE_RANK=\"${{1:-0}}\"\ncase \"$NODE_RANK\" in\n");
    for (const auto& c : p.nodes_cmd) s += fmt::format("  {}) ;;\n", c.rank);
    s += fmt::format("  *) echo \"usage: $0 NODE_RANK (0..{})\" >&2; exit 2 ;;\nesac\n", p.nodes - 1);
  }
  if (p.nodes > 1 && d.head_address.empty()) s += ": \"${HEAD_ADDR:?set HEAD_ADDR to the head node's address (node rank 0)}\"\n";
  auto one = [&](const NodeCommand& c, const std::string& indent) {
    std::string o;
    for (const auto& e : c.env) {
      const auto eq = e.find('=');
      o += indent + "export " + e.substr(0, eq) + "=\"" + e.substr(eq + 1) + "\"\n";
    }
    o += indent + "exec";
    for (const auto& arg : c.argv) {
      // ${HEAD_ADDR} is the one value left for the shell to expand (inside double quotes)
      if (arg.find("${HEAD_ADDR}") != std::string::npos && arg.find_first_of("'\"`\\\n") == std::string::npos && d.head_address.empty()) {
        std::string safe = arg;
        o += " \"" + safe + "\"";
      } else {
        o += " " + shell_word(arg);
      }
    }
    return o + "\n";
  };
  if (only_rank >= 0) {
    s += one(p.nodes_cmd.at(static_cast<std::size_t>(only_rank)), "");
  } else if (p.nodes == 1) {
    s += one(p.nodes_cmd.front(), "");
  } else {
    s += "case \"$NODE_RANK\" in\n";
    for (const auto& c : p.nodes_cmd) s += fmt::format("  {})\n", c.rank) + one(c, "    ") + "    ;;\n";
    s += "esac\n";
  }
  return s;
}

std::string emit_lws(const LaunchPlan& p, const std::string& image, const std::string& gpu_resource) {
  const Deployment& d = p.deployment;
  const int port = d.port > 0 ? d.port : d.default_port();
  std::string name = "k3plan-" + p.model_id;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
  if (name.size() > 50) name.resize(50);
  while (!name.empty() && name.back() == '-') name.pop_back();
  auto args_for = [&](const NodeCommand& c) {
    // Replace the head address and ranks with the variables LWS injects
    std::string o;
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      std::string a = c.argv[i];
      const std::string prev = i > 0 ? c.argv[i - 1] : "";
      bool raw = false;
      if (prev == "--node-rank") {
        a = "$(LWS_WORKER_INDEX)";
        raw = true;
      } else if (prev == "--nnodes") {
        a = "$(LWS_GROUP_SIZE)";
        raw = true;
      } else if (a == "${HEAD_ADDR}:20000") {
        a = "$(LWS_LEADER_ADDRESS):20000";
        raw = true;
      } else if (a == "${HEAD_ADDR}") {
        a = "$(LWS_LEADER_ADDRESS)";
        raw = true;
      }
      o += "            - " + yaml_quote(raw ? a : k8s_escape(a)) + "\n";
    }
    return o;
  };
  auto container = [&](const NodeCommand& c, bool leader) {
    std::string o;
    o += "        containers:\n";
    o += fmt::format("          - name: {}\n", leader ? "leader" : "worker");
    o += fmt::format("            image: {}\n", yaml_quote(image));
    o += "            command:\n";
    o += args_for(c);
    o += "            env:\n";
    o += "              - name: GLOO_SOCKET_IFNAME\n                value: \"eth0\"\n              - name: NCCL_SOCKET_IFNAME\n            "
         "    value: \"eth0\"\n";
    o += "            resources:\n              limits:\n";
    o += fmt::format("                {}: {}\n", gpu_resource,
                     yaml_quote(std::to_string(p.gpus_per_node < p.gpus ? p.gpus_per_node : p.gpus)));
    if (leader) {
      o += fmt::format("            ports:\n              - containerPort: {}\n", port);
      o += fmt::format(
          "            readinessProbe:\n              httpGet:\n                path: /v1/models\n                port: {}\n              "
          "initialDelaySeconds: 120\n              periodSeconds: 15\n              failureThreshold: 240\n",
          port);
    }
    o += "            volumeMounts:\n              - name: dshm\n                mountPath: /dev/shm\n";
    o += "        volumes:\n          - name: dshm\n            emptyDir:\n              medium: Memory\n";
    return o;
  };
  std::string s;
  s += fmt::format("# Generated by k3plan for {} on {} x {} ({} pods of {} GPUs); checked with `k3plan fit` first.\n", p.model_id, p.gpus,
                   d.gpu, p.nodes, std::min(p.gpus, p.gpus_per_node));
  s += fmt::format("# Ready when the leader prints: {}\n", p.ready_line);
  s += "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n";
  s += fmt::format("  name: {}\n", yaml_quote(name));
  s += "spec:\n  replicas: 1\n  startupPolicy: LeaderCreated\n  leaderWorkerTemplate:\n";
  s += fmt::format("    size: {}\n", p.nodes);
  s += "    restartPolicy: RecreateGroupOnPodRestart\n";
  s += "    leaderTemplate:\n      metadata:\n        labels:\n          role: leader\n      spec:\n";
  s += container(p.nodes_cmd.front(), true);
  s += "    workerTemplate:\n      spec:\n";
  s += container(p.nodes_cmd.size() > 1 ? p.nodes_cmd[1] : p.nodes_cmd.front(), false);
  s += "---\napiVersion: v1\nkind: Service\nmetadata:\n";
  s += fmt::format("  name: {}\n", yaml_quote(name + "-leader"));
  s += fmt::format(
      "spec:\n  selector:\n    leaderworkerset.sigs.k8s.io/name: {}\n    role: leader\n  ports:\n    - port: {}\n      targetPort: {}\n",
      yaml_quote(name), port, port);
  return s;
}

}  // namespace k3plan
