#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <k3plan/hub.hpp>
#include <k3plan/model_summary.hpp>
#include <system_error>

namespace k3plan {

std::optional<Model> find_model_spec(const Catalogue& cat, const std::string& spec) {
  if (const Model* m = cat.find_model(spec)) return *m;
  std::error_code ec;
  if (std::filesystem::exists(spec, ec) || parse_hub_id(spec) || spec.find(".json") != std::string::npos ||
      spec.find(".yaml") != std::string::npos)
    return resolve_model(cat, spec);
  return std::nullopt;
}

std::vector<int> block_layer_counts(const Model& m) {
  std::vector<int> counts(m.blocks.size(), 0);
  for (int l : m.layers) ++counts[static_cast<std::size_t>(l)];
  return counts;
}

std::string layer_summary(const Model& m) {
  const std::vector<int> counts = block_layer_counts(m);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    const auto& b = m.blocks[i];
    std::string kind = to_string(b.kind);
    if (b.sliding_window > 0 && b.kind == AttnKind::gqa) kind = fmt::format("swa{}", b.sliding_window);
    if (b.kind == AttnKind::compressed) kind = b.compress_ratio ? fmt::format("c{}", b.compress_ratio) : "swa";
    parts.push_back(fmt::format("{} {}", counts[i], kind));
  }
  return fmt::format("{}", fmt::join(parts, " + "));
}

std::string shipped_precision(const Model& m) {
  std::string shipped = m.default_precision;
  if (m.precision.count(ParamGroup::routed_experts) && m.precision.at(ParamGroup::routed_experts) != m.default_precision)
    shipped += "+" + m.precision.at(ParamGroup::routed_experts) + " experts";
  return shipped;
}

nlohmann::json figure_json(const Figure& f) {
  nlohmann::json j = {{"value", f.value}, {"source", f.source}};
  if (f.assumed) {
    j["assumed"] = true;
    j["reason"] = f.reason;
  }
  return j;
}

}  // namespace k3plan
