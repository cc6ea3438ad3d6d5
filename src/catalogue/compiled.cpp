// Lookup of the compiled catalogue entries (compiled.hpp); the entries themselves are generated
// (compiled_defaults.cpp: none, in a binary that links no generated entries).
#include <k3plan/compiled.hpp>
#include <mutex>

namespace k3plan::compiled {

std::optional<std::string_view> find(std::string_view key) {
  for (const auto& e : entries())
    if (key == e.key) return e.bytes;
  return std::nullopt;
}

namespace {
std::mutex& sources_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Source>& sources_list() {
  static std::vector<Source> s;
  return s;
}
}  // namespace

std::vector<Source> sources() {
  std::lock_guard lock(sources_mutex());
  return sources_list();
}

void add_source(std::string key, std::function<std::string()> read_serialised) {
  std::lock_guard lock(sources_mutex());
  for (auto& s : sources_list())
    if (s.key == key) return;
  sources_list().push_back({std::move(key), std::move(read_serialised)});
}

}  // namespace k3plan::compiled
