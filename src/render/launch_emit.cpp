// Shell scripts and LeaderWorkerSet manifests for a launch plan (launch.hpp states the rules that
// keep them inert). Multi-node layouts follow the engines' own documents:
// - SGLang: --nnodes / --node-rank / --dist-init-addr, in an LWS from $(LWS_GROUP_SIZE),
//   $(LWS_WORKER_INDEX) and $(LWS_LEADER_ADDRESS) (sglang docs/references/multi_node_deployment,
//   "Deploying on Kubernetes with LWS"; LWS docs/examples/sglang).
// - vLLM data parallel across nodes: one `vllm serve` per node with --data-parallel-size-local L,
//   --data-parallel-start-rank = node index x L, --data-parallel-address / --data-parallel-rpc-port
//   of the head, --headless on the others (vllm docs/serving/data_parallel_deployment.md); in an LWS
//   the start rank is LWS_WORKER_INDEX x L, computed by a fixed `sh -c` wrapper that passes the
//   argv through "$@" untouched.
// - vLLM TP/PP across nodes: --nnodes / --node-rank / --master-addr, --headless on the others
//   (vllm docs/serving/parallelism_scaling.md, native multi-node without Ray).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <k3plan/ascii.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/launch.hpp>
#include <k3plan/output_file.hpp>
#include <regex>
#include <stdexcept>
#include <string_view>

namespace k3plan {

namespace {

constexpr std::string_view kHeadAddrVar = "${HEAD_ADDR}";

// Text for a `#` comment (shell or YAML): printable ASCII only, anything else becomes '?', so no
// line break of any kind (LF, CR, NEL, U+2028/2029) and no escape sequence reaches the file.
std::string comment_text(const std::string& s) {
  std::string o = s;
  for (auto& c : o)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return o;
}

// Lines of a script are for people: at most this wide (a word longer than a line stays whole).
constexpr std::size_t kScriptWidth = 100;

// A `#` comment of comment_text(s) broken at spaces into lines of at most kScriptWidth columns,
// the continuation lines indented under the text.
std::string comment_lines(const std::string& prefix, const std::string& s) {
  const std::string text = comment_text(s);
  std::string out, line = prefix;
  bool fresh = true;  // nothing after the prefix yet: never break here
  for (std::size_t a = 0; a <= text.size();) {
    std::size_t b = text.find(' ', a);
    if (b == std::string::npos) b = text.size();
    const std::string word = text.substr(a, b - a);
    if (!fresh && line.size() + 1 + word.size() > kScriptWidth) {
      out += line + "\n";
      line = "#  ";
    }
    line += " " + word;
    fresh = false;
    a = b + 1;
  }
  return out + line + "\n";
}

// A double-quoted YAML scalar holding exactly `s`, written in printable ASCII: '"' and '\'
// escaped, every other byte outside 0x20-0x7e as \xXX / \uXXXX / \UXXXXXXXX (YAML 1.2 7.3.1).
// `kubelet`: the value sits in command/args/env, where the kubelet expands $(VAR): '$' -> "$$".
std::string k8s_scalar(const std::string& s, bool kubelet) {
  std::string o = "\"";
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, &cp);
    if (n == 0) throw InputError(fmt::format("launch: invalid UTF-8 at byte {} of '{}'", i, comment_text(s)));
    i += n;
    if (cp == '"')
      o += "\\\"";
    else if (cp == '\\')
      o += "\\\\";
    else if (cp == '$' && kubelet)
      o += "$$";
    else if (cp >= 0x20 && cp <= 0x7e)
      o += static_cast<char>(cp);
    else if (cp <= 0xff)
      o += fmt::format("\\x{:02x}", cp);
    else if (cp <= 0xffff)
      o += fmt::format("\\u{:04x}", cp);
    else
      o += fmt::format("\\U{:08x}", cp);
  }
  return o + "\"";
}

std::string value_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "";
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
    // the manual layer split, on every node (each node's workers read it from their own
    // environment): whole numbers and commas only, so inert in the shell and in YAML
    if (!d.pp_layer_partition.empty())
      c.env.push_back(q.engine->pp_partition_assignment(d.pp_layer_partition));
    p.nodes_cmd.push_back(c);
  }
  return p;
}

nlohmann::json launch_commands_json(const LaunchPlan& p) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : p.nodes_cmd) j.push_back({{"rank", c.rank}, {"env", c.env}, {"argv", c.argv}});
  return j;
}

std::string emit_shell(const LaunchPlan& p, int only_rank) {
  const Deployment& d = p.deployment;
  std::string s = "#!/usr/bin/env bash\n";
  s += comment_lines("#", fmt::format("Generated by k3plan for {} on {} x {} ({} node{}); checked with `k3plan fit` first.", p.model_id,
                                      p.gpus, d.gpu, p.nodes, p.nodes > 1 ? "s" : ""));
  s += comment_lines("#", "Ready when the server prints: " + p.ready_line);
  s += comment_lines("#", "Health check: curl -sf " + p.health_url);
  s += comment_lines("#", fmt::format("Flags checked against {} (data/engines/{}-flags.yaml).", p.release.label(), to_string(d.engine)));
  for (const auto& n : p.notes) s += comment_lines("# note:", n);
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
    // the program and its positional words on the exec line, then one line per flag with its
    // values, continued with ` \`
    o += indent + "exec";
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      const std::string& arg = c.argv[i];
      const std::string prev = i > 0 ? c.argv[i - 1] : "";
      const bool head_flag = prev == "--dist-init-addr" || prev == "--data-parallel-address" || prev == "--master-addr";
      o += i > 0 && arg.rfind("--", 0) == 0 ? " \\\n" + indent + "  " : " ";
      if (head_flag && d.head_address.empty() && arg.rfind(kHeadAddrVar, 0) == 0)
        o +=
            "\"" + std::string(kHeadAddrVar) + "\"" + (arg.size() > kHeadAddrVar.size() ? shell_word(arg.substr(kHeadAddrVar.size())) : "");
      else
        o += shell_word(arg);
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

int startup_budget_seconds(double checkpoint_bytes, double pod_weights_bytes) {
  const double download_s = checkpoint_bytes / 0.5e9;  // assumed 0.5 GB/s per pod from the hub or a network volume
  const double load_s = pod_weights_bytes / 2e9;       // assumed 2 GB/s from local disk to the GPUs
  const double fixed_s = 900;                          // assumed: distributed init, torch.compile, CUDA graph capture
  return static_cast<int>(std::ceil((download_s + load_s + fixed_s) / 60.0)) * 60;
}

PinnedImage launch_image(Engine e, const std::string& engine_version) {
  std::string repo = engine_model(e).default_image();
  if (const auto colon = repo.rfind(':'); colon != std::string::npos) repo.resize(colon);
  const FlagTable& table = flag_table(e);
  const FlagRelease rel = table.resolve(engine_version);
  std::string release = rel.release;
  if (release.empty()) {
    // a window id or no version: the newest release read in that window (or in any window)
    const auto& ws = table.windows();
    for (auto it = ws.rbegin(); it != ws.rend() && release.empty(); ++it) {
      if (*it == "main" || (!engine_version.empty() && *it != rel.window)) continue;
      const std::string range = table.window_range(*it);
      release = range.substr(range.rfind('-') == std::string::npos ? 0 : range.rfind('-') + 1);
    }
  }
  if (release.empty() || release == "main") return {repo + ":latest", ""};
  return {repo + ":v" + release, release};
}

std::string k8s_name(const std::string& id) {
  std::string name = "k3plan-";
  for (const char c : id) {
    if (ascii_is_alnum(c))
      name += ascii_lower(c);
    else if (name.back() != '-')
      name += '-';
  }
  if (name.size() > 40) name.resize(40);
  while (name.back() == '-') name.pop_back();
  return name;
}

void parse_k8s_placement(const std::vector<std::string>& node_selectors, const std::vector<std::string>& tolerations, K8sSpec& k) {
  // label keys: optional DNS-subdomain prefix and '/', then a name of up to 63 characters;
  // values: up to 63 of [A-Za-z0-9._-], alphanumeric at both ends (Kubernetes "Labels and Selectors")
  static const std::regex key(R"(^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$)");
  static const std::regex value(R"(^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$)");
  auto bad = [](const char* opt, const std::string& s, const char* what) {
    return InputError(fmt::format("launch: {} '{}': {}", opt, comment_text(s), what));
  };
  for (const auto& s : node_selectors) {
    const auto eq = s.find('=');
    if (eq == std::string::npos) throw bad("--node-selector", s, "expected KEY=VALUE");
    const std::string kk = s.substr(0, eq), v = s.substr(eq + 1);
    if (!std::regex_match(kk, key)) throw bad("--node-selector", s, "the key is not a Kubernetes label key");
    if (!std::regex_match(v, value)) throw bad("--node-selector", s, "the value is not a Kubernetes label value");
    k.node_selector.emplace_back(kk, v);
  }
  for (const auto& s : tolerations) {
    K8sSpec::Toleration t;
    std::string rest = s;
    if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
      t.effect = rest.substr(colon + 1);
      rest.resize(colon);
      if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute")
        throw bad("--toleration", s, "the effect must be NoSchedule, PreferNoSchedule or NoExecute");
    }
    if (const auto eq = rest.find('='); eq != std::string::npos) {
      t.value = rest.substr(eq + 1);
      rest.resize(eq);
      if (!std::regex_match(t.value, value)) throw bad("--toleration", s, "the value is not a Kubernetes label value");
    }
    if (!std::regex_match(rest, key)) throw bad("--toleration", s, "the key is not a Kubernetes label key");
    t.key = rest;
    k.tolerations.push_back(t);
  }
}

namespace {

// One LeaderWorkerSet: `size` pods running one engine instance, and the Service in front of its leader.
struct LwsGroupSpec {
  std::string name;                     // the LeaderWorkerSet; its leader Service is name + "-leader"
  const NodeCommand* leader = nullptr;  // rank 0
  const NodeCommand* worker = nullptr;  // rank 1: every other pod (its rank from LWS_WORKER_INDEX)
  int size = 1, gpus_per_pod = 0, port = 0;
  std::string head_var;  // the head-address variable in the argv ("${HEAD_ADDR}"): $(LWS_LEADER_ADDRESS); "" = a literal head
  std::vector<std::pair<std::string, int>> extra_ports;  // named ports beside "http" (leader container and Service)
};

// nodeSelector and tolerations of a pod spec whose keys sit at `in`.
std::string k8s_placement(const K8sSpec& k, const std::string& in) {
  auto q = [](const std::string& s) { return k8s_scalar(s, false); };
  std::string o;
  if (!k.node_selector.empty()) {
    o += in + "nodeSelector:\n";
    for (const auto& [key, v] : k.node_selector) o += fmt::format("{}  {}: {}\n", in, q(key), q(v));
  }
  if (!k.tolerations.empty()) {
    o += in + "tolerations:\n";
    for (const auto& t : k.tolerations) {
      o += fmt::format("{}  - key: {}\n{}    operator: {}\n", in, q(t.key), in, t.value.empty() ? "\"Exists\"" : "\"Equal\"");
      if (!t.value.empty()) o += fmt::format("{}    value: {}\n", in, q(t.value));
      if (!t.effect.empty()) o += fmt::format("{}    effect: {}\n", in, q(t.effect));
    }
  }
  return o;
}

// A plan's NAME=value pairs as container env entries (items at `in`). The plan writes them for the
// shell as ${NAME:-default} (make_launch_plan, make_disagg_launch_plan): a literal default is the
// value; a default naming an address variable, or none (${NAME:?...}: "the address of this node"),
// is the pod's own IP (the Downward API's status.podIP).
std::string k8s_env(const std::vector<std::string>& env, const std::string& in) {
  std::string o;
  for (const auto& e : env) {
    const auto eq = e.find('=');
    const std::string name = e.substr(0, eq), v = e.substr(eq + 1);
    const std::string open = "${" + name + ":-";
    std::string literal;
    bool own_ip = true;
    if (v.rfind(open, 0) == 0 && v.size() > open.size() && v.back() == '}') {
      literal = v.substr(open.size(), v.size() - open.size() - 1);
      own_ip = literal.find("${") != std::string::npos;
    } else if (v.find("${") == std::string::npos) {
      literal = v;
      own_ip = false;
    }
    o += fmt::format("{}- name: {}\n", in, k8s_scalar(name, false));
    if (own_ip)
      o += fmt::format("{}  valueFrom:\n{}    fieldRef:\n{}      fieldPath: \"status.podIP\"\n", in, in, in);
    else
      o += fmt::format("{}  value: {}\n", in, k8s_scalar(literal, true));
  }
  return o;
}

// The LeaderWorkerSet and its leader Service (two YAML documents, the first without a `---`).
std::string lws_documents(const LwsGroupSpec& g, const K8sSpec& k) {
  auto q = [](const std::string& s) { return k8s_scalar(s, false); };
  // vLLM data parallel over the pods: the per-worker start rank is LWS_WORKER_INDEX x L
  const std::string dp_local = value_after(g.leader->argv, "--data-parallel-size-local");
  auto command_for = [&](const NodeCommand& c, bool leader) {
    std::vector<std::string> argv;
    std::vector<bool> raw;  // written without $$ escaping: the LWS variable references
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i];
      const std::string prev = i > 0 ? c.argv[i - 1] : "";
      if (!dp_local.empty() && (a == "--data-parallel-start-rank" || prev == "--data-parallel-start-rank")) continue;
      std::string v = a;
      bool r = false;
      if (prev == "--node-rank") {
        v = "$(LWS_WORKER_INDEX)";
        r = true;
      } else if (prev == "--nnodes") {
        v = "$(LWS_GROUP_SIZE)";
        r = true;
      } else if (!g.head_var.empty() && (prev == "--dist-init-addr" || prev == "--master-addr" || prev == "--data-parallel-address") &&
                 a.rfind(g.head_var, 0) == 0) {
        // the head variable and what k3plan wrote after it (":20000")
        v = "$(LWS_LEADER_ADDRESS)" + a.substr(g.head_var.size());
        r = true;
      }
      argv.push_back(v);
      raw.push_back(r);
    }
    std::string o = "            command:\n";
    if (!leader && !dp_local.empty()) {
      // a fixed script: the argv follows as "$@" (never re-read by the shell), then the rank
      o += "              - \"/bin/sh\"\n              - \"-c\"\n";
      o += "              - " +
           k8s_scalar(fmt::format("exec \"$@\" --data-parallel-start-rank \"$((LWS_WORKER_INDEX * {}))\"", std::stoi(dp_local)), true) +
           "\n";
      o += "              - \"k3plan-worker\"\n";
    }
    for (std::size_t i = 0; i < argv.size(); ++i) o += "              - " + (raw[i] ? q(argv[i]) : k8s_scalar(argv[i], true)) + "\n";
    return o;
  };
  const bool own_volume = !k.model_pvc.empty() || !k.model_host_path.empty();
  const double cache_bytes = k.checkpoint_bytes * 1.1 + 10e9;  // the checkpoint, 10% and 10 GB for the engine's caches
  const std::string cache_size = fmt::format("{}Gi", static_cast<long long>(std::ceil(cache_bytes / 1073741824.0)));
  const int budget_s = startup_budget_seconds(k.checkpoint_bytes, k.pod_weights_bytes);
  auto pod = [&](const NodeCommand& c, bool leader) {
    std::string o = k8s_placement(k, "        ");
    o += "        containers:\n";
    o += fmt::format("          - name: {}\n", leader ? "\"leader\"" : "\"worker\"");
    o += fmt::format("            image: {}\n", q(k.image));
    o += command_for(c, leader);
    o += "            env:\n";
    o += "              - name: \"HF_HOME\"\n                value: \"/models/huggingface\"\n";
    o += fmt::format(
        "              - name: \"HF_TOKEN\"\n                valueFrom:\n                  secretKeyRef:\n                    name: {}\n"
        "                    key: \"HF_TOKEN\"\n                    optional: true\n",
        q(k.hf_token_secret));
    o += k8s_env(c.env, "              ");
    o += "            resources:\n";
    o += fmt::format("              limits:\n                {}: {}\n", q(k.gpu_resource), q(std::to_string(g.gpus_per_pod)));
    o += fmt::format("              requests:\n                {}: {}\n", q(k.gpu_resource), q(std::to_string(g.gpus_per_pod)));
    if (!own_volume) o += fmt::format("                \"ephemeral-storage\": {}\n", q(cache_size));
    if (leader) {
      o += fmt::format("            ports:\n              - containerPort: {}\n                name: \"http\"\n", g.port);
      for (const auto& [pname, pnum] : g.extra_ports)
        o += fmt::format("              - containerPort: {}\n                name: {}\n", pnum, q(pname));
      // the start-up budget from the checkpoint size; /health answers once the engine serves
      o += fmt::format(
          "            startupProbe:\n              httpGet:\n                path: \"/health\"\n                port: {}\n"
          "              periodSeconds: 10\n              failureThreshold: {}\n",
          g.port, budget_s / 10);
      o += fmt::format(
          "            readinessProbe:\n              httpGet:\n                path: \"/health\"\n                port: {}\n"
          "              periodSeconds: 10\n              failureThreshold: 3\n",
          g.port);
      o += fmt::format(
          "            livenessProbe:\n              httpGet:\n                path: \"/health\"\n                port: {}\n"
          "              periodSeconds: 30\n              timeoutSeconds: 10\n              failureThreshold: 5\n",
          g.port);
    }
    o += "            volumeMounts:\n              - name: \"dshm\"\n                mountPath: \"/dev/shm\"\n";
    o += "              - name: \"models\"\n                mountPath: \"/models\"\n";
    // shared memory for NCCL and the engine's worker processes (vLLM's LWS example gives 15Gi)
    o += "        volumes:\n          - name: \"dshm\"\n            emptyDir:\n              medium: \"Memory\"\n"
         "              sizeLimit: \"16Gi\"\n";
    o += "          - name: \"models\"\n";
    if (!k.model_pvc.empty())
      o += fmt::format("            persistentVolumeClaim:\n              claimName: {}\n", q(k.model_pvc));
    else if (!k.model_host_path.empty())
      o += fmt::format("            hostPath:\n              path: {}\n              type: \"Directory\"\n", q(k.model_host_path));
    else
      o += fmt::format("            emptyDir:\n              sizeLimit: {}\n", q(cache_size));
    return o;
  };
  std::string s = "apiVersion: \"leaderworkerset.x-k8s.io/v1\"\nkind: \"LeaderWorkerSet\"\nmetadata:\n";
  s += fmt::format("  name: {}\n", q(g.name));
  s += "spec:\n  replicas: 1\n  startupPolicy: \"LeaderCreated\"\n  leaderWorkerTemplate:\n";
  s += fmt::format("    size: {}\n", g.size);
  s += "    restartPolicy: \"RecreateGroupOnPodRestart\"\n";
  s += "    leaderTemplate:\n      metadata:\n        labels:\n          role: \"leader\"\n      spec:\n";
  s += pod(*g.leader, true);
  s += "    workerTemplate:\n      spec:\n";
  s += pod(*g.worker, false);
  s += "---\napiVersion: \"v1\"\nkind: \"Service\"\nmetadata:\n";
  s += fmt::format("  name: {}\n", q(g.name + "-leader"));
  s += fmt::format("spec:\n  selector:\n    \"leaderworkerset.sigs.k8s.io/name\": {}\n    role: \"leader\"\n  ports:\n", q(g.name));
  s += fmt::format("    - name: \"http\"\n      port: {}\n      targetPort: {}\n", g.port, g.port);
  for (const auto& [pname, pnum] : g.extra_ports)
    s += fmt::format("    - name: {}\n      port: {}\n      targetPort: {}\n", q(pname), pnum, pnum);
  return s;
}

}  // namespace

std::string emit_lws(const LaunchPlan& p, const K8sSpec& k) {
  const Deployment& d = p.deployment;
  LwsGroupSpec g;
  g.name = k8s_name(p.model_id);
  g.leader = &p.nodes_cmd.front();
  g.worker = p.nodes_cmd.size() > 1 ? &p.nodes_cmd[1] : &p.nodes_cmd.front();
  g.size = p.nodes;
  g.gpus_per_pod = std::min(p.gpus, p.gpus_per_node);
  g.port = d.port > 0 ? d.port : engine_model(d.engine, d.engine_version).default_port();
  if (d.head_address.empty()) g.head_var = std::string(kHeadAddrVar);
  const int budget_s = startup_budget_seconds(k.checkpoint_bytes, k.pod_weights_bytes);
  std::string s;
  s += fmt::format("# Generated by k3plan for {} on {} x {} ({} pods of {} GPUs); checked with `k3plan fit` first.\n",
                   comment_text(p.model_id), p.gpus, comment_text(d.gpu), p.nodes, g.gpus_per_pod);
  s += fmt::format("# Ready when the leader prints: {}\n", p.ready_line);
  s += fmt::format("# Flags checked against {} (data/engines/{}-flags.yaml).\n", comment_text(p.release.label()), to_string(d.engine));
  s += fmt::format("# Start-up budget {} s (startupProbe): checkpoint {:.1f} GB, {:.1f} GB loaded per pod.\n", budget_s,
                   k.checkpoint_bytes / 1e9, k.pod_weights_bytes / 1e9);
  for (const auto& n : p.notes) s += comment_lines("# note:", n);
  return s + lws_documents(g, k);
}

std::string emit_lws(const LaunchPlan& p, const std::string& image, const std::string& gpu_resource) {
  K8sSpec k;
  k.image = image;
  k.gpu_resource = gpu_resource;
  return emit_lws(p, k);
}

// --- disaggregated prefill / decode -------------------------------------------------------------
// SGLang: every worker runs python -m sglang.launch_server with --disaggregation-mode prefill|decode
// and --disaggregation-transfer-backend (default mooncake; --disaggregation-ib-device for Mooncake's
// RDMA devices), python/sglang/srt/server_args.py (disaggregation_transfer_backend = "mooncake",
// disaggregation_bootstrap_port = 8998); the router is sgl-router's
// `python -m sglang_router.launch_router --pd-disaggregation --prefill URL BOOTSTRAP_PORT --decode URL`
// (sgl-model-gateway/bindings/python/src/sglang_router/router_args.py @ BBuf/sglang 65d3b47f: a
// prefill URL without a port has no bootstrap port, so 8998 is passed; docs/advanced_features/
// pd_disaggregation.mdx @ bytedance-iaas/sglang 6ed5780c).
// vLLM: every worker runs vllm serve with --kv-transfer-config
// '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' and VLLM_NIXL_SIDE_CHANNEL_HOST set to its
// own address; the proxy is tests/v1/kv_connector/nixl_integration/toy_proxy_server.py of the same
// release, --prefiller-hosts/--prefiller-ports/--decoder-hosts/--decoder-ports
// (docs/features/nixl_connector_usage.md @ v0.11.0 b8b302cde434; NixlConnector is registered in
// vllm/distributed/kv_transfer/kv_connector/factory.py from v0.9.0).
namespace {

constexpr int kSglangBootstrapPort = 8998;

std::string address_var(const std::string& role, int worker) {
  std::string up = role;
  for (auto& c : up) c = static_cast<char>(c - 'a' + 'A');
  return fmt::format("{}_{}_ADDR", up, worker);
}

// The variables an argument built around ${NAME} references (upper-case names only).
std::vector<std::string> referenced_vars(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t a = s.find("${"); a != std::string::npos; a = s.find("${", a + 2)) {
    std::size_t b = a + 2;
    while (b < s.size() && ((s[b] >= 'A' && s[b] <= 'Z') || ascii_is_digit(s[b]) || s[b] == '_')) ++b;
    if (b < s.size() && s[b] == '}' && b > a + 2) out.push_back(s.substr(a + 2, b - a - 2));
  }
  return out;
}

// An argument with ${NAME} references: each reference double-quoted for the shell, the text around
// it shell_word'ed (k3plan builds these arguments; no user value reaches them).
std::string address_word(const std::string& s) {
  std::string o;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t a = s.find("${", i);
    std::size_t b = a == std::string::npos ? std::string::npos : s.find('}', a);
    if (a == std::string::npos || b == std::string::npos) {
      o += shell_word(s.substr(i));
      break;
    }
    if (a > i) o += shell_word(s.substr(i, a - i));
    o += "\"" + s.substr(a, b - a + 1) + "\"";
    i = b + 1;
  }
  return o;
}

}  // namespace

DisaggLaunchPlan make_disagg_launch_plan(LaunchPool prefill, LaunchPool decode, const DisaggLaunchRequest& q) {
  DisaggLaunchPlan p;
  const Deployment& d = prefill.plan.deployment;
  const bool sglang = d.engine == Engine::sglang;
  p.release = prefill.plan.release;
  for (const auto* n : {&prefill.plan.notes, &decode.plan.notes})
    for (const auto& x : *n)
      if (std::find(p.notes.begin(), p.notes.end(), x) == p.notes.end()) p.notes.push_back(x);
  if (sglang) {
    p.transfer_backend = q.transfer_backend.empty() ? "mooncake" : q.transfer_backend;
  } else {
    if (!q.transfer_backend.empty() && q.transfer_backend != "nixl" && q.transfer_backend != "NixlConnector")
      throw InputError(fmt::format("launch: --transfer-backend {}: the vLLM pair is generated with NixlConnector (nixl) only",
                                   comment_text(q.transfer_backend)));
    if (!q.ib_device.empty())
      throw InputError("launch: --ib-device is SGLang's Mooncake device list; NixlConnector takes UCX_NET_DEVICES from the environment");
    p.transfer_backend = "NixlConnector";
  }
  const int router_port = q.router_port > 0 ? q.router_port : sglang ? 8000 : 8192;
  const FlagTable& table = flag_table(d.engine);
  if (!p.release.known())
    p.notes.push_back(fmt::format("{}: no flag window covers it, the disaggregation flags are unchecked", p.release.label()));
  auto side_args = [&](const std::string& role) {
    std::vector<std::string> a;
    if (sglang) {
      a = {"--disaggregation-mode", role, "--disaggregation-transfer-backend", p.transfer_backend};
      if (!q.ib_device.empty()) a.insert(a.end(), {"--disaggregation-ib-device", q.ib_device});
    } else {
      a = {"--kv-transfer-config", R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})"};
    }
    return a;
  };
  // the release must have every disaggregation flag and value: without them the pair would start
  // as two aggregated servers (or not at all); refuse, naming the flag and the rule
  for (const std::string role : {"prefill", "decode"}) {
    const auto a = side_args(role);
    for (std::size_t i = 0; i < a.size() && p.error.empty(); ++i) {
      if (a[i].rfind("--", 0) != 0) continue;
      if (!table.has_flag(a[i], p.release))
        p.error = fmt::format("{} has no {}: disaggregated serving needs it (data/engines/{}-flags.yaml)", p.release.label(), a[i],
                              to_string(d.engine));
      else if (i + 1 < a.size() && !table.accepts(a[i], a[i + 1], p.release))
        p.error = fmt::format("{} does not accept {} {} (data/engines/{}-flags.yaml)", p.release.label(), a[i], comment_text(a[i + 1]),
                              to_string(d.engine));
    }
  }
  if (!p.error.empty()) {
    p.rule = "launch-disagg-flags";
    return p;
  }
  std::vector<std::string> prefill_hosts, decode_hosts, prefill_ports, decode_ports;
  for (auto* pool : {&prefill, &decode}) {
    const std::string role = pool == &prefill ? "prefill" : "decode";
    const std::vector<std::string> extra = side_args(role);
    const std::string port = std::to_string(pool->plan.deployment.port > 0 ? pool->plan.deployment.port
                                                                            : engine_model(d.engine, d.engine_version).default_port());
    for (int w = 0; w < pool->workers; ++w) {
      const std::string var = "${" + address_var(role, w) + "}";
      p.address_vars.push_back(address_var(role, w));
      (role == "prefill" ? prefill_hosts : decode_hosts).push_back(var);
      (role == "prefill" ? prefill_ports : decode_ports).push_back(port);
      for (NodeCommand c : pool->plan.nodes_cmd) {
        c.role = role;
        c.worker = w;
        // the worker's head is its own address variable (the aggregated plan's ${HEAD_ADDR})
        for (std::size_t i = 0; i < c.argv.size(); ++i)
          if (c.argv[i].rfind(kHeadAddrVar, 0) == 0) {
            c.argv[i] = var + c.argv[i].substr(kHeadAddrVar.size());
            c.address_args.push_back(i);
          }
        c.argv.insert(c.argv.end(), extra.begin(), extra.end());
        if (!sglang)
          c.env.push_back(c.rank == 0 ? fmt::format("VLLM_NIXL_SIDE_CHANNEL_HOST=${{VLLM_NIXL_SIDE_CHANNEL_HOST:-{}}}", var)
                                      : "VLLM_NIXL_SIDE_CHANNEL_HOST=${VLLM_NIXL_SIDE_CHANNEL_HOST:?set it to the address of this node}");
        p.commands.push_back(std::move(c));
      }
    }
  }
  NodeCommand r;
  r.role = "router";
  if (sglang) {
    r.argv = {"python3", "-m", "sglang_router.launch_router", "--pd-disaggregation"};
    for (std::size_t i = 0; i < prefill_hosts.size(); ++i) {
      r.argv.insert(r.argv.end(), {"--prefill", fmt::format("http://{}:{}", prefill_hosts[i], prefill_ports[i])});
      r.address_args.push_back(r.argv.size() - 1);
      r.argv.push_back(std::to_string(kSglangBootstrapPort));
    }
    for (std::size_t i = 0; i < decode_hosts.size(); ++i) {
      r.argv.insert(r.argv.end(), {"--decode", fmt::format("http://{}:{}", decode_hosts[i], decode_ports[i])});
      r.address_args.push_back(r.argv.size() - 1);
    }
    r.argv.insert(r.argv.end(), {"--host", d.host, "--port", std::to_string(router_port)});
    p.bootstrap_port = kSglangBootstrapPort;
  } else {
    const std::string script = "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py";
    r.argv = {"python3", script, "--host", d.host, "--port", std::to_string(router_port)};
    // the file at the release's tag (vLLM tags are v<release>, as its images), else at main
    const std::string rel = !q.source_release.empty() ? q.source_release : p.release.release;
    p.router_script_url =
        fmt::format("https://raw.githubusercontent.com/vllm-project/vllm/{}/{}", rel.empty() ? "main" : "v" + rel, script);
    auto list = [&](const char* flag, const std::vector<std::string>& v, bool address) {
      r.argv.push_back(flag);
      for (const auto& x : v) {
        r.argv.push_back(x);
        if (address) r.address_args.push_back(r.argv.size() - 1);
      }
    };
    list("--prefiller-hosts", prefill_hosts, true);
    list("--prefiller-ports", prefill_ports, false);
    list("--decoder-hosts", decode_hosts, true);
    list("--decoder-ports", decode_ports, false);
    p.notes.push_back("the proxy is vLLM's toy_proxy_server.py: run it from a source checkout of the same vLLM release");
  }
  p.commands.push_back(r);
  p.router_port = router_port;
  p.router_url = fmt::format("http://{}:{}/v1", d.host == "0.0.0.0" ? "127.0.0.1" : d.host, router_port);
  p.prefill = std::move(prefill);
  p.decode = std::move(decode);
  return p;
}

nlohmann::json launch_commands_json(const DisaggLaunchPlan& p) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : p.commands)
    j.push_back({{"role", c.role}, {"worker", c.worker}, {"rank", c.rank}, {"env", c.env}, {"argv", c.argv}});
  return j;
}

std::string emit_shell(const DisaggLaunchPlan& p) {
  const Deployment& d = p.prefill.plan.deployment;
  std::string s = "#!/usr/bin/env bash\n";
  s += comment_lines("#", fmt::format("Generated by k3plan for {} on {} x {}: disaggregated prefill / decode, {} prefill worker{} of {} GPUs "
                                      "and {} decode worker{} of {} GPUs, each checked with `k3plan fit` first.",
                                      p.prefill.plan.model_id, p.prefill.workers * p.prefill.plan.gpus + p.decode.workers * p.decode.plan.gpus,
                                      d.gpu, p.prefill.workers, p.prefill.workers > 1 ? "s" : "", p.prefill.plan.gpus, p.decode.workers,
                                      p.decode.workers > 1 ? "s" : "", p.decode.plan.gpus));
  s += comment_lines("#", "Run: ROLE WORKER NODE_RANK on each node (prefill|decode, the worker index, the node rank inside the worker), "
                          "and `router` once; every worker's head node address in " +
                              fmt::format("{}", fmt::join(p.address_vars, ", ")) + ".");
  s += comment_lines("#", "Workers are ready when they print: " + p.prefill.plan.ready_line + " Clients call the router: " + p.router_url);
  s += comment_lines("#", fmt::format("KV transfer: {}. Flags checked against {} (data/engines/{}-flags.yaml).", p.transfer_backend,
                                      p.release.label(), to_string(d.engine)));
  for (const auto& n : p.notes) s += comment_lines("# note:", n);
  s += "set -euo pipefail\nROLE=\"${1:-}\"\nWORKER=\"${2:-0}\"\nNODE_RANK=\"${3:-0}\"\n";
  s += "case \"$ROLE:$WORKER:$NODE_RANK\" in\n";
  for (const auto& c : p.commands) {
    s += fmt::format("  {}:{}:{})\n", c.role, c.worker, c.rank);
    std::vector<std::string> vars;
    auto need = [&](const std::string& text) {
      for (const auto& v : referenced_vars(text))
        if (std::find(p.address_vars.begin(), p.address_vars.end(), v) != p.address_vars.end() &&
            std::find(vars.begin(), vars.end(), v) == vars.end())
          vars.push_back(v);
    };
    for (std::size_t i : c.address_args) need(c.argv[i]);
    for (const auto& e : c.env) need(e);
    for (const auto& v : vars)
      s += fmt::format("    if [ -z \"${{{}:-}}\" ]; then\n      echo {} >&2\n      exit 2\n    fi\n", v,
                       shell_quote(fmt::format("set {} to the address of the head node of that worker", v)));
    for (const auto& e : c.env) {
      // fixed NAME=value pairs written by make_disagg_launch_plan / make_launch_plan, never user values
      const auto eq = e.find('=');
      s += "    export " + e.substr(0, eq) + "=\"" + e.substr(eq + 1) + "\"\n";
    }
    s += "    exec";
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      const std::string& arg = c.argv[i];
      s += i > 0 && arg.rfind("--", 0) == 0 ? " \\\n      " : " ";
      const bool addr = std::find(c.address_args.begin(), c.address_args.end(), i) != c.address_args.end();
      s += addr ? address_word(arg) : shell_word(arg);
    }
    s += "\n    ;;\n";
  }
  s += "  *)\n    echo " +
       shell_quote(fmt::format("usage: run.sh prefill WORKER NODE_RANK | decode WORKER NODE_RANK | router (prefill workers 0..{}, decode "
                               "workers 0..{}, node ranks 0..{} / 0..{})",
                               p.prefill.workers - 1, p.decode.workers - 1, p.prefill.plan.nodes - 1, p.decode.plan.nodes - 1)) +
       " >&2\n    exit 2\n    ;;\nesac\n";
  return s;
}

// Disaggregated on Kubernetes, after SGLang's LWS P/D example (sglang
// docs/references/multi_node_deployment/lws_pd/lws_pd_deploy.md @ 59e54757, lws-examples/p-svc.yaml
// @ 65cf1ed0, lb.yaml @ e61c708a): one LeaderWorkerSet per worker, a Service selecting its leader
// (leaderworkerset.sigs.k8s.io/name + role: leader), and the router as a Deployment + Service calling
// the workers by their Service names. The example runs hostNetwork; here the pods keep their own
// network, so the prefill Service also carries the bootstrap port the decode workers connect to (the
// router hands them the prefill URL's host). vLLM: each pod's VLLM_NIXL_SIDE_CHANNEL_HOST is its pod IP
// (the decode side connects to it directly, nixl_connector_usage.md as above), and the proxy, a file of
// the source tree that vllm/vllm-openai does not ship (docker/Dockerfile @ 0000977e copies examples/ and
// benchmarks/ only), is fetched by an init container from the release's tag.
std::string emit_lws(const DisaggLaunchPlan& p, const K8sSpec& prefill, const K8sSpec& decode) {
  const LaunchPlan& pp = p.prefill.plan;
  const Deployment& d = pp.deployment;
  auto q = [](const std::string& s) { return k8s_scalar(s, false); };
  const std::string base = k8s_name(pp.model_id);
  const NodeCommand* router = nullptr;
  for (const auto& c : p.commands)
    if (c.role == "router") router = &c;
  if (!router) throw std::logic_error("emit_lws: a disaggregated plan without its router");
  std::vector<std::pair<std::string, std::string>> service_of;  // "${PREFILL_0_ADDR}" -> that worker's Service
  std::string docs, budgets;
  for (const LaunchPool* pool : {&p.prefill, &p.decode}) {
    const std::string role = pool == &p.prefill ? "prefill" : "decode";
    const K8sSpec& k = pool == &p.prefill ? prefill : decode;
    const Deployment& pd = pool->plan.deployment;
    budgets += fmt::format("{}{} {} s ({:.1f} GB loaded per pod)", budgets.empty() ? "" : ", ", role,
                           startup_budget_seconds(k.checkpoint_bytes, k.pod_weights_bytes), k.pod_weights_bytes / 1e9);
    for (int w = 0; w < pool->workers; ++w) {
      LwsGroupSpec g;
      for (const auto& c : p.commands) {
        if (c.role != role || c.worker != w) continue;
        if (c.rank == 0) g.leader = &c;
        if (c.rank == 1) g.worker = &c;
      }
      if (!g.leader) throw std::logic_error("emit_lws: a disaggregated worker without its head command");
      if (!g.worker) g.worker = g.leader;
      g.name = fmt::format("{}-{}-{}", base, role, w);
      g.size = pool->plan.nodes;
      g.gpus_per_pod = std::min(pool->plan.gpus, pool->plan.gpus_per_node);
      g.port = pd.port > 0 ? pd.port : engine_model(pd.engine, pd.engine_version).default_port();
      g.head_var = "${" + address_var(role, w) + "}";
      if (role == "prefill" && p.bootstrap_port > 0) g.extra_ports = {{"bootstrap", p.bootstrap_port}};
      docs += "---\n" + lws_documents(g, k);
      service_of.emplace_back(g.head_var, g.name + "-leader");
    }
  }
  // the router's argv with every address variable k3plan put in it replaced by that worker's Service name
  std::vector<std::string> argv = router->argv;
  for (std::size_t i : router->address_args)
    for (const auto& [var, svc] : service_of)
      for (std::size_t at = argv[i].find(var); at != std::string::npos; at = argv[i].find(var, at + svc.size()))
        argv[i].replace(at, var.size(), svc);
  const std::string rname = base + "-router";
  std::string s;
  s += comment_lines(
      "#", fmt::format("Generated by k3plan for {} on {} x {}: disaggregated prefill / decode, {} prefill worker{} of {} GPUs "
                       "and {} decode worker{} of {} GPUs, each checked with `k3plan fit` first.",
                       pp.model_id, p.prefill.workers * pp.gpus + p.decode.workers * p.decode.plan.gpus, d.gpu, p.prefill.workers,
                       p.prefill.workers > 1 ? "s" : "", pp.gpus, p.decode.workers, p.decode.workers > 1 ? "s" : "", p.decode.plan.gpus));
  s += comment_lines("#", fmt::format("One LeaderWorkerSet and leader Service per worker, then the router (Deployment and Service {}); "
                                      "clients in the cluster call http://{}:{}/v1",
                                      rname, rname, p.router_port));
  s += comment_lines("#", "Workers are ready when their leader prints: " + pp.ready_line);
  s += comment_lines("#", fmt::format("KV transfer: {}, between the pods' own addresses: the pods need the cluster's RDMA network for it "
                                      "(this manifest requests GPUs only). Flags checked against {} (data/engines/{}-flags.yaml).",
                                      p.transfer_backend, p.release.label(), to_string(d.engine)));
  s += comment_lines("#",
                     "Start-up budget (startupProbe): " + budgets + fmt::format(", checkpoint {:.1f} GB.", prefill.checkpoint_bytes / 1e9));
  if (!p.router_script_url.empty()) s += comment_lines("#", "The router pod's init container fetches " + p.router_script_url);
  for (const auto& n : p.notes) s += comment_lines("# note:", n);
  s += docs.substr(4);  // the first document needs no separator
  // the router: no GPU, the prefill pool's image and placement
  s += "---\napiVersion: \"apps/v1\"\nkind: \"Deployment\"\nmetadata:\n";
  s += fmt::format("  name: {}\n", q(rname));
  s += fmt::format("spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {}\n", q(rname));
  s += fmt::format("  template:\n    metadata:\n      labels:\n        app: {}\n    spec:\n", q(rname));
  s += k8s_placement(prefill, "      ");
  const std::string mount = "/router";
  if (!p.router_script_url.empty()) {
    // a fixed program; the URL and the destination (the plan's script path under the mount) are its arguments
    s += "      initContainers:\n        - name: \"fetch-router\"\n";
    s += fmt::format("          image: {}\n          command:\n", q(prefill.image));
    for (const std::string& a : {std::string("python3"), std::string("-c"),
                                 std::string("import os, sys, urllib.request; os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True); "
                                             "urllib.request.urlretrieve(sys.argv[1], sys.argv[2])"),
                                 p.router_script_url, mount + "/" + (argv.size() > 1 ? argv[1] : std::string())})
      s += "            - " + k8s_scalar(a, true) + "\n";
    s += fmt::format("          volumeMounts:\n            - name: \"router\"\n              mountPath: {}\n", q(mount));
  }
  s += "      containers:\n        - name: \"router\"\n";
  s += fmt::format("          image: {}\n", q(prefill.image));
  if (!p.router_script_url.empty()) s += fmt::format("          workingDir: {}\n", q(mount));
  s += "          command:\n";
  for (const auto& a : argv) s += "            - " + k8s_scalar(a, true) + "\n";
  s += fmt::format("          ports:\n            - containerPort: {}\n              name: \"http\"\n", p.router_port);
  s += fmt::format("          readinessProbe:\n            tcpSocket:\n              port: {}\n            periodSeconds: 10\n",
                   p.router_port);
  if (!p.router_script_url.empty()) {
    s += fmt::format("          volumeMounts:\n            - name: \"router\"\n              mountPath: {}\n", q(mount));
    s += "      volumes:\n        - name: \"router\"\n          emptyDir: {}\n";
  }
  s += "---\napiVersion: \"v1\"\nkind: \"Service\"\nmetadata:\n";
  s += fmt::format("  name: {}\n", q(rname));
  s += fmt::format("spec:\n  selector:\n    app: {}\n  ports:\n    - name: \"http\"\n      port: {}\n      targetPort: {}\n", q(rname),
                   p.router_port, p.router_port);
  return s;
}

}  // namespace k3plan
