// Shell scripts and LeaderWorkerSet manifests for a launch plan. Every user string goes through
// shell_quote / yaml_quote; in Kubernetes args `$(` is escaped as `$$(` so the kubelet does not
// expand variables hidden in a model path.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <k3plan/engine_flags.hpp>
#include <k3plan/launch.hpp>
#include <string_view>

namespace k3plan {

namespace {

constexpr std::string_view kHeadAddrVar = "${HEAD_ADDR}";

// Text for a `#` comment: control characters (a newline would end the comment) become spaces.
std::string comment_text(const std::string& s) {
  std::string o = s;
  for (auto& c : o)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return o;
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
                            std::int64_t context, double memory_fraction, std::int64_t max_num_seqs) {
  LaunchPlan p;
  p.deployment = d;
  p.model_id = m.id;
  p.gpus = gpus;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  const std::string model_path = !d.model_path.empty() ? d.model_path : serve_model_path(m, d.model);
  const int port = d.port > 0 ? d.port : engine_model(d.engine, d.engine_version).default_port();
  const std::string head = d.head_address.empty() ? std::string(kHeadAddrVar) : d.head_address;
  p.health_url = fmt::format("http://{}:{}/v1/models", d.host == "0.0.0.0" ? "127.0.0.1" : d.host, port);
  p.ready_line = d.engine == Engine::sglang ? "The server is fired up and ready to roll!" : "Application startup complete.";

  // the engine's own flags, one builder for fit, launch and report (engines/flags.cpp)
  ServeRequest q;
  q.model = &m;
  q.engine = &engine_model(d.engine, d.engine_version);
  q.engine_version = d.engine_version;
  q.layout = l;
  q.defaults.memory_fraction = memory_fraction;
  q.context = context;
  q.max_running = d.max_num_seqs ? *d.max_num_seqs : d.engine == Engine::vllm && max_num_seqs > 0 ? max_num_seqs : d.users;
  q.kv_dtype = d.kv_dtype;
  q.chunked_prefill_size = d.chunked_prefill_size;
  q.cuda_graph_max_bs = d.cuda_graph_max_bs;
  q.max_num_batched_tokens = d.max_num_batched_tokens;
  q.served_model_name = d.served_model_name;
  const ServeArgs sa = serve_args(q);
  p.release = sa.release;
  p.notes = sa.notes;
  p.error = sa.error;

  for (int r = 0; r < nodes; ++r) {
    NodeCommand c;
    c.rank = r;
    std::vector<std::string>& a = c.argv;
    if (d.engine == Engine::sglang)
      a = {"python3", "-m", "sglang.launch_server", "--model-path", model_path};
    else
      a = {"vllm", "serve", model_path};
    a.insert(a.end(), sa.args.begin(), sa.args.end());
    const std::size_t node_flags = a.size();
    if (nodes > 1) {
      if (d.engine == Engine::sglang) {
        a.insert(a.end(), {"--nnodes", std::to_string(nodes), "--node-rank", std::to_string(r), "--dist-init-addr", head + ":20000"});
      } else if (l.dp > 1) {
        // DP + EP across nodes: one `vllm serve` per node, DP ranks split evenly
        const int local = l.dp / nodes;
        a.insert(a.end(), {"--data-parallel-size-local", std::to_string(local), "--data-parallel-address", head, "--data-parallel-rpc-port",
                           "13345"});
        if (r > 0) a.insert(a.end(), {"--data-parallel-start-rank", std::to_string(r * local), "--headless"});
      } else {
        a.insert(a.end(), {"--nnodes", std::to_string(nodes), "--node-rank", std::to_string(r), "--master-addr", head});
        if (r > 0) a.push_back("--headless");
      }
    }
    a.insert(a.end(), {"--host", d.host, "--port", std::to_string(port)});
    std::vector<std::string> dropped;
    keep_accepted(a, node_flags, sa.release, dropped);
    if (!dropped.empty() && p.error.empty())
      p.error = fmt::format("{} cannot run {} nodes as planned: {}", sa.release.label(), nodes, dropped.front());
    for (auto& x : dropped)
      if (std::find(p.notes.begin(), p.notes.end(), x) == p.notes.end()) p.notes.push_back(x);
    if (nodes > 1) c.env = {"GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}", "NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}"};
    p.nodes_cmd.push_back(c);
  }
  return p;
}

std::string emit_shell(const LaunchPlan& p, int only_rank) {
  const Deployment& d = p.deployment;
  std::string s = "#!/usr/bin/env bash\n";
  s += fmt::format("# Generated by k3plan for {} on {} x {} ({} node{}); checked with `k3plan fit` first.\n", comment_text(p.model_id),
                   p.gpus, d.gpu, p.nodes, p.nodes > 1 ? "s" : "");
  s += fmt::format("# Ready when the server prints: {}\n", p.ready_line);
  s += fmt::format("# Health check: curl -sf {}\n", comment_text(p.health_url));
  s += fmt::format("# Flags checked against {} (data/engines/{}-flags.yaml).\n", p.release.label(), to_string(d.engine));
  for (const auto& n : p.notes) s += "# note: " + comment_text(n) + "\n";
  s += "set -euo pipefail\n";
  if (only_rank < 0) {
    s += fmt::format("NODE_RANK=\"${{1:-0}}\"\ncase \"$NODE_RANK\" in\n");
    for (const auto& c : p.nodes_cmd) s += fmt::format("  {}) ;;\n", c.rank);
    s += fmt::format("  *) echo \"usage: $0 NODE_RANK (0..{})\" >&2; exit 2 ;;\nesac\n", p.nodes - 1);
  }
  // The head address is the one value left for the shell to expand. The message is a fixed,
  // single-quoted string; no user value is ever inside double quotes.
  if (p.nodes > 1 && d.head_address.empty())
    s += "if [ -z \"${HEAD_ADDR:-}\" ]; then\n  echo " + shell_quote("set HEAD_ADDR to the address of the head node (node rank 0)") +
         " >&2\n  exit 2\nfi\n";
  auto one = [&](const NodeCommand& c, const std::string& indent) {
    std::string o;
    for (const auto& e : c.env) {
      // fixed NAME=${NAME:-default} pairs written by make_launch_plan, never user values
      const auto eq = e.find('=');
      o += indent + "export " + e.substr(0, eq) + "=\"" + e.substr(eq + 1) + "\"\n";
    }
    o += indent + "exec";
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      const std::string& arg = c.argv[i];
      const std::string prev = i > 0 ? c.argv[i - 1] : "";
      const bool head_flag = prev == "--dist-init-addr" || prev == "--data-parallel-address" || prev == "--master-addr";
      if (head_flag && d.head_address.empty() && arg.rfind(kHeadAddrVar, 0) == 0)
        o += " \"" + std::string(kHeadAddrVar) + "\"" +
             (arg.size() > kHeadAddrVar.size() ? shell_word(arg.substr(kHeadAddrVar.size())) : "");
      else
        o += " " + shell_word(arg);
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
  const int port = d.port > 0 ? d.port : engine_model(d.engine, d.engine_version).default_port();
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
      } else if (d.head_address.empty() && prev == "--dist-init-addr" && a == "${HEAD_ADDR}:20000") {
        a = "$(LWS_LEADER_ADDRESS):20000";
        raw = true;
      } else if (d.head_address.empty() && (prev == "--master-addr" || prev == "--data-parallel-address") && a == "${HEAD_ADDR}") {
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
  s += fmt::format("# Generated by k3plan for {} on {} x {} ({} pods of {} GPUs); checked with `k3plan fit` first.\n",
                   comment_text(p.model_id), p.gpus, d.gpu, p.nodes, std::min(p.gpus, p.gpus_per_node));
  s += fmt::format("# Ready when the leader prints: {}\n", p.ready_line);
  s += fmt::format("# Flags checked against {} (data/engines/{}-flags.yaml).\n", p.release.label(), to_string(d.engine));
  for (const auto& n : p.notes) s += "# note: " + comment_text(n) + "\n";
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
