#pragma once
// `k3plan launch`: per-node engine commands (shell), a LeaderWorkerSet manifest, or JSON, for a
// deployment that `fit` accepts. Emitters quote every string so hostile input stays inert.
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
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
  std::string ready_line;  // what the server prints when it is ready
};

// argv for one node; `head` is the head node's address as it should appear (may be a variable
// reference such as $(LWS_LEADER_ADDRESS) for manifests).
LaunchPlan make_launch_plan(const Deployment& d, const Model& m, const Layout& l, int gpus, int nodes, int gpus_per_node,
                            std::int64_t context, double memory_fraction);

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
