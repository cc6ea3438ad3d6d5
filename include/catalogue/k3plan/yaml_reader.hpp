#pragma once
// Strict YAML field access for catalogue and deployment files: every error names the file, the
// line and the field; unknown keys are rejected with a "did you mean".
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <k3plan/figure.hpp>
#include <string>
#include <vector>

namespace k3plan {

class YamlReader {
 public:
  // line_offset: lines before this text in its file (one document of a multi-document file).
  explicit YamlReader(std::string origin, int line_offset = 0) : origin_(std::move(origin)), line_offset_(line_offset) {}

  // Parses text through the input limits (check_yaml_limits: size, binary data, UTF-8, nesting),
  // then walks the tree: keys must be plain scalars, unique (unless the caller reports duplicates
  // itself, as the deployment reader does), and the tree within limits::kMaxYamlNodes once aliases
  // are expanded. Every failure is an InputError naming file:line:column and the field.
  YAML::Node parse(const std::string& text, bool duplicate_keys_allowed = false) const;
  // While one lives on this thread, parse() skips the input limits and the tree walk: only for the
  // embedded catalogue (compiled in; tests/test_hostile.cpp reads the same files through the full
  // boundary as a --data directory). Keeps start-up at the cost of parsing alone.
  struct TrustedInput {
    TrustedInput();
    ~TrustedInput();
    TrustedInput(const TrustedInput&) = delete;
    TrustedInput& operator=(const TrustedInput&) = delete;
  };
  // The tree walk of parse() for a tree loaded elsewhere (one document of a manifest).
  void check_tree(const YAML::Node& root, bool duplicate_keys_allowed = false) const;

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& msg) const;
  void require_map(const YAML::Node& n, const std::string& field) const;
  // A list, present: yaml-cpp gives a missing key of a const node as an invalid ("zombie") node
  // whose IsSequence() throws, so every list field is checked here and never with IsSequence().
  void require_list(const YAML::Node& n, const std::string& field, const std::string& expected = "expected a list") const;
  void check_keys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& ctx) const;

  bool has(const YAML::Node& map, const char* key) const { return map[key].IsDefined() && !map[key].IsNull(); }
  std::string str(const YAML::Node& map, const char* key, const std::string& ctx, bool required, const std::string& fallback = "") const;
  double number(const YAML::Node& map, const char* key, const std::string& ctx, bool required, double fallback, double min,
                double max) const;
  std::int64_t integer(const YAML::Node& map, const char* key, const std::string& ctx, bool required, std::int64_t fallback,
                       std::int64_t min, std::int64_t max) const;
  bool boolean(const YAML::Node& map, const char* key, const std::string& ctx, bool fallback) const;
  std::vector<std::string> strings(const YAML::Node& map, const char* key, const std::string& ctx) const;
  // A plain number (source = entry_source) or {value, source, assumed, reason}.
  Figure figure(const YAML::Node& map, const char* key, const std::string& ctx, bool required, const std::string& entry_source, double min,
                double max, std::vector<Assumption>* assumptions, const std::string& owner) const;

  const std::string& origin() const { return origin_; }

 private:
  double to_number(const YAML::Node& n, const std::string& field) const;
  std::string origin_;
  int line_offset_ = 0;
};

}  // namespace k3plan
