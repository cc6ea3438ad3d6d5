// The forms of a layout value (parallel.hpp).
#include <fmt/format.h>

#include <k3plan/parallel.hpp>

namespace k3plan {

nlohmann::json layout_json(const Layout& l) {
  return {{"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"pp", l.pp}, {"dp_attention", l.dp_attention}, {"dcp", l.dcp}};
}

std::string layout_text(const Layout& l) {
  std::string s = fmt::format("TP{}", l.tp);
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.dp > 1) s += fmt::format(" DP{}", l.dp);
  if (l.pp > 1) s += fmt::format(" PP{}", l.pp);
  if (l.dcp > 1) s += fmt::format(" DCP{}", l.dcp);
  if (l.dp_attention) s += " DP-attention";
  return s;
}

}  // namespace k3plan
