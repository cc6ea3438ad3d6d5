#pragma once
// Kubernetes manifests read back (src/catalogue/manifest.cpp): every LeaderWorkerSet of a
// multi-document YAML file, its group size, replicas, GPUs per pod and the engine command its
// leader runs, read through the same input limits as deployment files (input_limits.hpp).
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <string>
#include <vector>

namespace k3plan {

// One LeaderWorkerSet as a deployment.
struct LwsGroup {
  Deployment deployment;      // the leader's command; nodes = group size, gpus = size x GPUs per pod
  int gpus_per_pod = 0;       // GPUs each pod requests (0 = none requested: a finding says so)
  int group_size = 0;         // spec.leaderWorkerTemplate.size
  int replicas = 0;           // spec.replicas
  SourcePos anchor;           // where findings without a field of their own point
  std::string image_release;  // the leader image's tag as a release ("v0.10.1.1" -> "0.10.1.1"); empty = none
};

// Reads every LeaderWorkerSet in a manifest (other kinds are skipped). Positions point into the
// manifest. `gpu` (may be empty) is used when no node selector names one. Structural problems are
// findings (manifest/*); unreadable text is InputError.
std::vector<LwsGroup> parse_lws_manifest(const Catalogue& cat, const std::string& text, const std::string& origin, const std::string& gpu,
                                         std::vector<Finding>& findings);

}  // namespace k3plan
