#pragma once
// The catalogue: GPUs, models and prices. Built from the embedded data/ files, then extended or
// overridden by user directories (--data DIR, repeatable). Lookups resolve ids and aliases
// case-insensitively and suggest the closest id when nothing matches.
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct RentalQuote {
  std::string gpu;
  std::string kind;  // on-demand | spot | reserved | tco
  double usd_per_hour = 0;
  std::string date;
  std::string source;
  bool verified = true;
};

struct ApiPrice {
  std::string model;
  std::string provider;
  double input_cache_hit = 0;   // USD per million tokens
  double input_cache_miss = 0;  // USD per million tokens
  double output = 0;            // USD per million tokens
  std::string date;
  std::string source;
  bool verified = true;
};

struct Prices {
  Figure default_usd_per_gpu_hour{2.50, "", false, ""};
  double hours_per_month = 720;
  std::vector<RentalQuote> rental;
  std::vector<ApiPrice> api;
};

class Catalogue {
 public:
  // The embedded catalogue only.
  static Catalogue embedded();
  // Adds (or replaces by id) every *.yaml under dir: gpus.yaml, prices.yaml, models/*.yaml or any
  // file holding a `gpus:` list or a single model.
  void add_directory(const std::string& dir);
  void add_text(const std::string& text, const std::string& origin);

  // The GPUs k3plan plans for (ranked by fit, plan, perf). The GPUs of data/validation/gpus.yaml
  // (A100, L4, RTX, ... seen in public start-up logs) are only for `validate --log`
  // (validation_gpu()): they carry no calibration and are not planned for.
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Gpu>& validation_gpus() const { return validation_gpus_; }
  const std::vector<Model>& models() const { return models_; }
  const Prices& prices() const { return prices_; }
  // Efficiency-factor files under --data directories (a YAML with `families:` and `entries:`, the
  // schema of data/perf/efficiency.yaml, such as `k3plan calibrate -o` writes): kept as text for
  // the planner, which reads them and lays their entries over the embedded ones (efficiency_for(),
  // plan/calibrate.hpp).
  struct TextFile {
    std::string origin, text;
  };
  const std::vector<TextFile>& efficiency_files() const { return efficiency_files_; }

  const Gpu& gpu(const std::string& id_or_alias) const;
  const Gpu& validation_gpu(const std::string& id_or_alias) const;  // a catalogue GPU, else a validation one
  const Model& model(const std::string& id_or_alias) const;
  const Model* find_model(const std::string& id_or_alias) const;

 private:
  void put_model(Model m);
  void put_gpu(Gpu g);
  std::vector<Gpu> gpus_;
  std::vector<Gpu> validation_gpus_;
  std::vector<Model> models_;
  Prices prices_;
  std::vector<TextFile> efficiency_files_;
};

// -m/--model: a catalogue id or alias, a k3plan model YAML, a Hugging Face config.json, or a
// directory holding config.json.
Model resolve_model(const Catalogue& cat, const std::string& spec);

// Parses a k3plan model YAML document (text) into a Model; `origin` names the file in errors.
Model parse_model_yaml(const std::string& text, const std::string& origin);

// Derives a Model from the text of a Hugging Face config.json; `origin` names the file in errors.
// `hf_quant_config` is the optional hf_quant_config.json next to it (ModelOpt checkpoints).
Model import_hf_config(const std::string& json_text, const std::string& origin, const std::string& hf_quant_config = "");

}  // namespace k3plan
