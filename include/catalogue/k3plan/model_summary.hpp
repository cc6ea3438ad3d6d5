#pragma once
// What `k3plan models` and `k3plan show` say about a catalogue entry beyond its fields
// (src/catalogue/model_summary.cpp): which spec names a model, the layers per attention block, the
// precision as shipped and the JSON shape of a figure.
#include <k3plan/catalogue.hpp>
#include <k3plan/figure.hpp>
#include <k3plan/model.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3plan {

// The model `spec` names when it names one: a catalogue id or alias, else (resolve_model) an existing
// path, a Hub id or a .json / .yaml name; nullopt for anything else (`show` then tries a GPU id).
std::optional<Model> find_model_spec(const Catalogue& cat, const std::string& spec);

// Layers per attention block (one count per entry of m.blocks).
std::vector<int> block_layer_counts(const Model& m);
// "61 mla" / "48 kda + 16 mla": the layers of each block with its kind (swaN: sliding window of N
// tokens; cN: compressed N to 1).
std::string layer_summary(const Model& m);
// The checkpoint's precision as shipped: "fp8", or "bf16+mxfp4 experts" when the routed experts differ.
std::string shipped_precision(const Model& m);

// The one JSON shape of a figure: {value, source} plus {assumed: true, reason} when assumed.
nlohmann::json figure_json(const Figure& f);

}  // namespace k3plan
