#pragma once
// `k3plan launch`: per-node engine commands (shell), a LeaderWorkerSet manifest, or JSON, for a
// deployment that `fit` accepts. Emitters quote every string so hostile input stays inert.
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/report.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct NodeCommand {
  int rank = 0;
  std::vector<std::string> env;   // NAME=value
  std::vector<std::string> argv;  // program and arguments, unquoted
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

std::string emit_shell(const LaunchPlan& p, int only_rank = -1);  // -1 = one script taking the rank as $1
std::string emit_lws(const LaunchPlan& p, const std::string& image, const std::string& gpu_resource);

struct LaunchOptions {
  std::string file;         // deployment YAML (or fields below)
  Deployment flags;         // used when file is empty
  std::string emit = "sh";  // sh | k8s | json
  std::string out_dir;      // write files here instead of stdout
  std::string image;        // container image for k8s
};
Report run_launch(const Catalogue& cat, const LaunchOptions& o);

}  // namespace k3plan
