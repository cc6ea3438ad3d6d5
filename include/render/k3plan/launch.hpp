#pragma once
// `k3plan launch`: per-node engine commands (shell), a LeaderWorkerSet manifest, or JSON, for a
// deployment that `fit` accepts. Inert by construction: commands are argv vectors; in a script
// every argument is single-quoted (only the fixed ${HEAD_ADDR} reference is left to the shell); in
// a manifest every scalar is a double-quoted, pure-ASCII YAML string (\u escapes for the rest, so
// no line break of any YAML version survives) with `$` written `$$` where the kubelet expands
// $(VAR); comments hold printable ASCII only. Invalid UTF-8 in any value is refused (InputError).
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/report.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct NodeCommand {
  int rank = 0;
  std::vector<std::string> env;   // NAME=value
  std::vector<std::string> argv;  // program and arguments, unquoted
  // indices into argv of the arguments k3plan built around an address variable (${PREFILL_0_ADDR}
  // ...): the one place the shell expands anything, never a user value
  std::vector<std::size_t> address_args;
  std::string role;  // disaggregated: "prefill", "decode" or "router"; empty = aggregated
  int worker = 0;    // disaggregated: the worker index in its pool
};

struct LaunchPlan {
  Deployment deployment;
  std::string model_id;
  int gpus = 0, nodes = 0, gpus_per_node = 0;
  std::vector<NodeCommand> nodes_cmd;  // head first
  std::string health_url;
  std::string ready_line;          // what the server prints when it is ready
  FlagRelease release;             // the engine release the flags were checked against
  std::vector<std::string> notes;  // flags left out (a parser the release lacks) and why
  std::string error;               // set when the release cannot run the plan as written (launch refuses)
};

// argv for every node, built by serve_args (engine_flags.hpp) for d.engine_version; the head
// address is d.head_address or the variable ${HEAD_ADDR} (the shell script checks it is set; the
// manifest uses $(LWS_LEADER_ADDRESS)). `max_num_seqs`: the running-request cap fit resolved
// (vLLM --max-num-seqs when the deployment gives none; 0 = the users asked for).
LaunchPlan make_launch_plan(const Deployment& d, const Model& m, const Layout& l, int gpus, int nodes, int gpus_per_node,
                            std::int64_t context, double memory_fraction, std::int64_t max_num_seqs = 0);

// Disaggregated prefill / decode: `workers` engine instances per pool, each of `gpus` GPUs on
// `nodes` nodes, started with the engine's disaggregation flags, and the router / proxy in front.
struct LaunchPool {
  int workers = 1;
  LaunchPlan plan;  // one worker (its head address is the pool's variable, e.g. ${PREFILL_0_ADDR})
};
struct DisaggLaunchPlan {
  LaunchPool prefill, decode;
  std::string transfer_backend;          // SGLang --disaggregation-transfer-backend; vLLM: the KV connector
  std::vector<NodeCommand> commands;     // every node of every worker, then the router
  std::vector<std::string> address_vars; // the variables the script needs (one per worker head)
  std::string router_url;                // what clients call
  int router_port = 0;                   // the router / proxy listens here
  int bootstrap_port = 0;                // SGLang: each prefill worker's bootstrap server (decode workers connect); 0 = none
  // vLLM's proxy is a file of the engine's source tree at the release, not of its image: where it is
  // fetched from (the manifest's router pod does; a script runs it from a checkout); empty = in the image
  std::string router_script_url;
  FlagRelease release;
  std::vector<std::string> notes;
  std::string error;  // the release lacks a disaggregation flag (launch refuses)
  std::string rule;   // the id of the refusal (launch-disagg-flags)
};
struct DisaggLaunchRequest {
  std::string transfer_backend;  // empty = the engine's default (SGLang mooncake, vLLM NixlConnector)
  std::string ib_device;         // SGLang --disaggregation-ib-device (Mooncake); empty = not passed
  int router_port = 0;  // 0 = the documented one (SGLang router 8000, vLLM proxy 8192)
  std::string source_release;  // the release whose source files (vLLM's proxy) are fetched: the image's; empty = the flags'
};
// The two pools' plans come from make_launch_plan (one worker each); this adds the disaggregation
// flags (checked against the release's table), one command per node of every worker, and the router.
DisaggLaunchPlan make_disagg_launch_plan(LaunchPool prefill, LaunchPool decode, const DisaggLaunchRequest& q);
std::string emit_shell(const DisaggLaunchPlan& p);  // one script: ROLE [WORKER] [NODE_RANK]
nlohmann::json launch_commands_json(const DisaggLaunchPlan& p);

std::string emit_shell(const LaunchPlan& p, int only_rank = -1);  // -1 = one script taking the rank as $1
// The one JSON shape of a plan's commands (launch --emit json, report): [{rank, env, argv}], head first.
nlohmann::json launch_commands_json(const LaunchPlan& p);

// What a LeaderWorkerSet needs beyond the commands.
struct K8sSpec {
  std::string image;                            // pinned to the engine release (launch_image)
  std::string gpu_resource = "nvidia.com/gpu";  // or amd.com/gpu
  std::string model_pvc;                        // weights on this PersistentVolumeClaim (mounted at /models)
  std::string model_host_path;                  // or this node directory; neither: an emptyDir sized from the checkpoint
  std::string hf_token_secret = "hf-token";     // Secret with key HF_TOKEN for gated repos (optional: pods start without it)
  double checkpoint_bytes = 0;                  // as shipped: what one pod downloads
  double pod_weights_bytes = 0;                 // what one pod loads onto its GPUs
  std::vector<std::pair<std::string, std::string>> node_selector;  // label key, value
  struct Toleration {
    std::string key, value, effect;  // value empty: operator Exists; effect empty: every effect
  };
  std::vector<Toleration> tolerations;
};

// Parses --node-selector KEY=VALUE and --toleration KEY[=VALUE][:EFFECT] into `k`; keys and values
// must be valid Kubernetes label keys and values (InputError naming the option otherwise).
void parse_k8s_placement(const std::vector<std::string>& node_selectors, const std::vector<std::string>& tolerations, K8sSpec& k);

// Seconds the startup probe allows: the checkpoint downloaded at an assumed 0.5 GB/s per pod,
// loaded to the GPUs at an assumed 2 GB/s, plus 900 s for distributed init, compilation and CUDA
// graph capture (assumed), rounded up to whole minutes.
int startup_budget_seconds(double checkpoint_bytes, double pod_weights_bytes);

// The image for an engine release: the engine model's default repository tagged v<release>; the
// release is the one given, else the newest release the flag tables were read from.
struct PinnedImage {
  std::string image;
  std::string release;  // "0.21.0"
};
PinnedImage launch_image(Engine e, const std::string& engine_version);

// RFC 1123 label from an id ("k3plan-" + lower-case letters, digits and '-', at most 40 chars).
std::string k8s_name(const std::string& id);

std::string emit_lws(const LaunchPlan& p, const K8sSpec& k);
// Disaggregated: one LeaderWorkerSet (group size = the worker's nodes) and one leader Service per
// worker of each pool, each with its pool's spec (the start-up budget of what its pods load), then
// the router as a Deployment and Service (the prefill pool's image and placement). The router's
// address variables (${PREFILL_0_ADDR} ...) become the workers' Service names.
std::string emit_lws(const DisaggLaunchPlan& p, const K8sSpec& prefill, const K8sSpec& decode);
// The same with the defaults of K8sSpec and no checkpoint figures (the start-up budget's fixed part).
std::string emit_lws(const LaunchPlan& p, const std::string& image, const std::string& gpu_resource);

struct LaunchSide {
  int workers = 0, tp = 0, ep = 1;  // workers 0 = not given (1, or --<side>-gpus / TP); tp 0 = not given
  int gpus = 0;                     // the pool's GPUs (parallel.hpp pool_size), 0 = not given
  bool dp_attention = false;
};
struct LaunchOptions {
  std::string file;                         // deployment YAML (or fields below)
  // disaggregated: one prefill and one decode pool (--prefill-* / --decode-*), with -m -g
  LaunchSide prefill, decode;
  DisaggLaunchRequest disagg;
  Deployment flags;                         // used when file is empty
  bool layout_given = false;                // flags.layout was set by --tp/--ep/--dp/--pp/--dcp/--enable-dp-attention
  std::string emit = "sh";                  // sh | k8s | json
  std::string out_dir;                      // write files here instead of stdout
  std::string image;                        // container image for k8s (default: launch_image)
  std::string model_pvc;                    // k8s: PersistentVolumeClaim holding the weights
  std::string model_host_path;              // k8s: node directory holding the weights
  std::vector<std::string> node_selectors;  // k8s: KEY=VALUE
  std::vector<std::string> tolerations;     // k8s: KEY[=VALUE][:EFFECT]
};
Report run_launch(const Catalogue& cat, const LaunchOptions& o);

}  // namespace k3plan
