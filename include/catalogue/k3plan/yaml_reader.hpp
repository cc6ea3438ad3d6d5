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
  explicit YamlReader(std::string origin) : origin_(std::move(origin)) {}

  // Parses text; malformed YAML becomes an InputError with the line.
  YAML::Node parse(const std::string& text) const;

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& msg) const;
  void require_map(const YAML::Node& n, const std::string& field) const;
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
};

}  // namespace k3plan
