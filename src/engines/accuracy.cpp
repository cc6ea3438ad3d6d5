// Error bands from the out-of-sample start-up log table (data/validation/log-accuracy.yaml, written
// by tests/test_validate_logs.cpp and checked against the corpus there), and the model families
// they are keyed by.
#include <fmt/format.h>

#include <k3plan/embedded.hpp>
#include <k3plan/engine.hpp>
#include <mutex>

#include <k3plan/yaml_reader.hpp>

namespace k3plan {

std::string model_kind(const Model& m) {
  bool linear = false, dsa = false, mla = false, windowed = false;
  for (int l : m.layers) {
    const auto& b = m.blocks[static_cast<std::size_t>(l)];
    linear = linear || b.is_linear();
    dsa = dsa || (b.kind == AttnKind::mla && b.indexer_heads > 0) || b.kind == AttnKind::compressed;
    mla = mla || b.kind == AttnKind::mla;
    windowed = windowed || b.sliding_window > 0;
  }
  if (linear) return "hybrid";
  if (dsa) return "dsa";
  if (mla) return "mla";
  if (windowed) return "sliding";
  if (m.moe) return "moe";
  return "dense";
}

namespace {
struct Row {
  std::string engine, window, kind;
  int logs = 0;
  double median = 0, max = 0;
};

const std::vector<Row>& rows() {
  static std::once_flag once;
  static std::vector<Row> out;
  std::call_once(once, [] {
    for (const auto& f : embedded_files()) {
      if (std::string(f.path) != "validation/log-accuracy.yaml") continue;
      YamlReader r("data/validation/log-accuracy.yaml");
      const YAML::Node root = r.parse(std::string(f.text));
      r.check_keys(root, {"bands"}, "");
      for (const auto& n : root["bands"]) {
        r.check_keys(n, {"engine", "window", "kind", "logs", "median_abs_error_pct", "max_abs_error_pct"}, "bands[]");
        Row x;
        x.engine = r.str(n, "engine", "bands[]", true);
        x.window = r.str(n, "window", "bands[]", true);
        x.kind = r.str(n, "kind", "bands[]", true);
        x.logs = static_cast<int>(r.integer(n, "logs", "bands[]", true, 0, 1, 100000));
        x.median = r.number(n, "median_abs_error_pct", "bands[]", true, 0, 0, 1e6);
        x.max = r.number(n, "max_abs_error_pct", "bands[]", true, 0, 0, 1e6);
        out.push_back(x);
      }
    }
  });
  return out;
}
}  // namespace

std::string AccuracyBand::text() const {
  if (!validated) return fmt::format("not validated: no out-of-sample start-up log of {}", scope);
  return fmt::format("KV tokens within {:.1f}% (median {:.1f}%) on {} out-of-sample start-up log{} of {}", max_abs_error_pct,
                     median_abs_error_pct, logs, logs == 1 ? "" : "s", scope);
}

AccuracyBand accuracy_band(Engine e, const std::string& window, const std::string& kind) {
  const std::string eng = to_string(e);
  const char* name = e == Engine::vllm ? "vLLM" : "SGLang";
  struct Scope {
    std::string window, kind, text;
  };
  const Scope scopes[] = {{window, kind, fmt::format("{} {}, {} models", name, window, kind)},
                          {"*", kind, fmt::format("{} (any version), {} models", name, kind)}};
  for (const auto& sc : scopes)
    for (const auto& r : rows())
      if (r.engine == eng && r.window == sc.window && r.kind == sc.kind) {
        AccuracyBand b;
        b.validated = true;
        b.scope = sc.text;
        b.logs = r.logs;
        b.median_abs_error_pct = r.median;
        b.max_abs_error_pct = r.max;
        if (&sc != &scopes[0]) b.scope += fmt::format(" (none of {} {} yet)", name, window + ", " + kind + " models");
        return b;
      }
  AccuracyBand b;
  b.scope = scopes[0].text;
  return b;
}

}  // namespace k3plan
