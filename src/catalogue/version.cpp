// k3plan --version (version.hpp).
#include <fmt/format.h>

#include <cctype>
#include <k3plan/compiled.hpp>
#include <k3plan/engine_version.hpp>
#include <k3plan/version.hpp>

namespace k3plan {

namespace {
// YYYY-MM or YYYY-MM-DD
bool is_date(const std::string& s) {
  if (s.size() != 7 && s.size() != 10) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 4 || i == 7;
    if (dash ? s[i] != '-' : !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}
}  // namespace

std::string catalogue_date(const Catalogue& c) {
  std::string best;
  auto see = [&](const std::string& d) {
    if (is_date(d) && d > best) best = d;
  };
  for (const auto& m : c.models()) see(m.date);
  for (const auto& g : c.gpus()) see(g.price_date);
  for (const auto& q : c.prices().rental) see(q.date);
  for (const auto& q : c.prices().api) see(q.date);
  for (Engine e : {Engine::sglang, Engine::vllm})
    for (const auto& v : engine_versions(e)) see(v.date);
  return best;
}

std::string version_text() {
  std::string date;
  compiled::load_or_read("catalogue_date", date, [](std::string& d) { d = catalogue_date(Catalogue::embedded()); });
  return fmt::format("k3plan {}\ncommit {}\ncatalogue {} (the newest date in its models, GPU and API prices and engine versions)",
                     build_version(), build_commit(), date.empty() ? "undated" : date);
}

}  // namespace k3plan
