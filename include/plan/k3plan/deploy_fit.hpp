#pragma once
// A deployment taken through `fit`: the same budget and engine rules the fit command applies.
#include <k3plan/budget.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/deploy.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct DeploymentFit {
  Model model;
  const Gpu* gpu = nullptr;
  int gpus = 0;
  int nodes = 0;
  std::int64_t context = 0;
  FitResult fit;
};

// Resolves the model and GPU (InputError for unknown ids, with suggestions), fills the GPU count
// from gpus / nodes, takes the engine defaults for everything omitted, and evaluates the layout
// (the deployment's own, or the best engine-valid one for that many GPUs).
DeploymentFit fit_deployment(const Catalogue& cat, const Deployment& d);

}  // namespace k3plan
