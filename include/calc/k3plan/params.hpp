#pragma once
// Parameter counts from the geometry (not from the model name), per parameter group, and the
// bytes each precision takes, block scales included.
#include <array>
#include <cstdint>
#include <k3plan/model.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct ParamCounts {
  std::array<double, kParamGroups> by_group{};  // indexed by ParamGroup
  double total = 0;                             // every group except mtp and vision (the convention model cards use)
  double active = 0;                            // per token: non-expert groups + routed x k/E, input embedding excluded
  double mtp = 0;                               // multi-token-prediction layers, reported separately
  double vision = 0;                            // encoder towers (vision + audio), reported separately
  double audio = 0;                             // the audio encoder's part of `vision`
  double routed_per_expert_layer = 0;           // parameters of one routed expert in one layer
  double operator[](ParamGroup g) const { return by_group[static_cast<std::size_t>(g)]; }
};

ParamCounts count_params(const Model& m);

// Parameters of one attention block (all its projections, norms, gates, convs).
double attention_params(const Model& m, const AttentionBlock& b);
// The part of them every TP rank keeps whole: MLA's low-rank input projections and the DSA
// indexer keys; DeepSeek V4's q and kv down-projections.
double attention_replicated_params(const Model& m, const AttentionBlock& b);

struct PrecisionFormat {
  std::string name;        // bf16, fp8-block, mxfp4, ...
  double bits_per_weight;  // including block scales
  std::string note;        // how the scales are laid out
};

// Known weight formats. Throws InputError with a suggestion for unknown names.
const PrecisionFormat& precision_format(const std::string& name);
const std::vector<PrecisionFormat>& precision_formats();

struct WeightBytes {
  double bytes = 0;
  std::array<double, kParamGroups> by_group{};
};

// Every parameter (total, without mtp/vision) at one precision.
WeightBytes weights_uniform(const ParamCounts& p, const std::string& precision);
// As shipped: each group at the model's own precision (mtp and vision not included).
WeightBytes weights_as_shipped(const Model& m, const ParamCounts& p);

}  // namespace k3plan
