#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <k3plan/ascii.hpp>
#include <k3plan/error.hpp>
#include <k3plan/figure.hpp>
#include <k3plan/gpu.hpp>
#include <k3plan/model.hpp>
#include <k3plan/units.hpp>
#include <limits>

namespace k3plan {

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = ascii_lower(word);
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::string lc = ascii_lower(c);
    std::size_t d = edit_distance(w, lc);
    // a prefix ("h20" of "h200") counts as close
    if (lc.rfind(w, 0) == 0 || w.rfind(lc, 0) == 0) d = std::min<std::size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, w.size() / 3);
  return best_d <= limit ? best : std::string();
}

void add_assumption(std::vector<Assumption>& list, const Assumption& a) {
  for (const auto& x : list)
    if (x.what == a.what) return;
  list.push_back(a);
}

std::int64_t parse_context(std::string_view text, std::string_view what) {
  std::string t(text);
  while (!t.empty() && ascii_is_space(t.back())) t.pop_back();
  while (!t.empty() && ascii_is_space(t.front())) t.erase(t.begin());
  if (t.empty()) throw InputError(fmt::format("{}: empty value", what));
  std::int64_t mult = 1;
  const char suffix = t.back();
  if (suffix == 'k' || suffix == 'K')
    mult = 1024;
  else if (suffix == 'M' || suffix == 'm')
    mult = 1048576;
  if (mult != 1) t.pop_back();
  if (t.empty() || t.size() > 12 || !std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    throw InputError(fmt::format("{}: '{}' is not a token count (use e.g. 8192, 128k = 131,072 or 1M = 1,048,576)", what, text));
  const std::int64_t v = std::stoll(t) * mult;
  if (v <= 0) throw InputError(fmt::format("{}: '{}' must be positive", what, text));
  if (v > (std::int64_t{1} << 34)) throw InputError(fmt::format("{}: '{}' is absurdly large", what, text));
  return v;
}

std::string format_context(std::int64_t tokens) {
  if (tokens >= 1048576 && tokens % 1048576 == 0) return fmt::format("{}M", tokens / 1048576);
  if (tokens >= 1024 && tokens % 1024 == 0) return fmt::format("{}k", tokens / 1024);
  return fmt::format("{}", tokens);
}

std::string human_decimal(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.2f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

std::string human_binary(double bytes) {
  if (bytes >= kGiB * 1024) return fmt::format("{:.2f} TiB", bytes / (kGiB * 1024));
  if (bytes >= kGiB) return fmt::format("{:.2f} GiB", bytes / kGiB);
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  return fmt::format("{:.0f} B", bytes);
}

const char* to_string(AttnKind k) {
  switch (k) {
    case AttnKind::gqa:
      return "gqa";
    case AttnKind::mla:
      return "mla";
    case AttnKind::kda:
      return "kda";
    case AttnKind::gdn:
      return "gdn";
    case AttnKind::mamba2:
      return "mamba2";
    case AttnKind::compressed:
      return "compressed";
    case AttnKind::none:
      return "none";
  }
  return "?";
}

const char* to_string(ParamGroup g) {
  static const char* names[] = {"embedding", "lm_head",     "attention", "dense_mlp", "shared_experts", "routed_experts",
                                "router",    "latent_proj", "norms",     "mtp",       "vision"};
  return names[static_cast<int>(g)];
}

const std::string& Model::precision_of(ParamGroup g) const {
  const auto it = precision.find(g);
  return it == precision.end() ? default_precision : it->second;
}

int Model::attention_heads() const {
  for (const auto& b : blocks)
    if (b.kind == AttnKind::gqa || b.kind == AttnKind::mla || b.kind == AttnKind::compressed) return b.num_heads;
  return blocks.empty() ? 1 : std::max(1, blocks.front().num_heads > 0 ? blocks.front().num_heads : blocks.front().num_v_heads);
}

bool Gpu::runs_natively(const std::string& format) const {
  return std::find(native_formats.begin(), native_formats.end(), format) != native_formats.end();
}

void validate_model(const Model& m, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& msg) {
    throw InputError(fmt::format("{}: model '{}': {}: {}", where, m.id, field, msg));
  };
  if (m.hidden_size <= 0) bad("hidden_size", "must be positive");
  if (m.vocab_size <= 0) bad("vocab_size", "must be positive");
  if (m.max_context <= 0) bad("max_context", "must be positive");
  if (m.layers.empty()) bad("layers", "no decoder layers");
  if (m.layers.size() > 10000) bad("layers", "absurd layer count");
  for (const auto& b : m.blocks) {
    const std::string f = "attention." + b.name;
    switch (b.kind) {
      case AttnKind::gqa:
        if (b.num_heads <= 0 || b.num_kv_heads <= 0 || b.head_dim <= 0) bad(f, "num_heads, num_kv_heads and head_dim must be positive");
        if (b.num_heads % b.num_kv_heads != 0) bad(f, "num_heads must be a multiple of num_kv_heads");
        break;
      case AttnKind::mla:
        if (b.num_heads <= 0 || b.kv_lora_rank <= 0 || b.qk_rope_head_dim < 0 || b.qk_nope_head_dim <= 0 || b.v_head_dim <= 0)
          bad(f, "num_heads, kv_lora_rank, qk_nope_head_dim and v_head_dim must be positive");
        break;
      case AttnKind::kda:
        if (b.num_heads <= 0 || b.head_dim <= 0 || b.conv_kernel <= 0) bad(f, "num_heads, head_dim and conv_kernel must be positive");
        break;
      case AttnKind::gdn:
        if (b.num_k_heads <= 0 || b.num_v_heads <= 0 || b.head_k_dim <= 0 || b.head_v_dim <= 0 || b.conv_kernel <= 0)
          bad(f, "num_k_heads, num_v_heads, head_k_dim, head_v_dim and conv_kernel must be positive");
        break;
      case AttnKind::mamba2:
        if (b.num_heads <= 0 || b.head_dim <= 0 || b.state_size <= 0 || b.conv_kernel <= 0 || b.n_groups <= 0)
          bad(f, "num_heads, head_dim, state_size, n_groups and conv_kernel must be positive");
        break;
      case AttnKind::none:
        if (!b.has_mlp) bad(f, "a layer with neither attention nor MLP");
        break;
      case AttnKind::compressed:
        if (b.num_heads <= 0 || b.num_kv_heads <= 0 || b.head_dim <= 0 || b.sliding_window <= 0)
          bad(f, "num_heads, num_kv_heads, head_dim and sliding_window must be positive");
        if (b.compress_ratio < 0) bad(f, "compress_ratio must be >= 0");
        break;
    }
  }
  if (m.moe) {
    const auto& e = *m.moe;
    if (e.routed_experts <= 0 || e.experts_per_token <= 0 || e.expert_intermediate_size <= 0)
      bad("moe", "routed_experts, experts_per_token and expert_intermediate_size must be positive");
    if (e.experts_per_token > e.routed_experts) bad("moe.experts_per_token", "exceeds routed_experts");
    if (e.first_dense_layers < 0 || e.first_dense_layers > m.num_layers()) bad("moe.first_dense_layers", "out of range");
    if (e.first_dense_layers > 0 && m.dense_intermediate_size <= 0) bad("dense_intermediate_size", "needed for the first dense layers");
    for (int d : e.dense_layers)
      if (d < 0 || d >= m.num_layers()) bad("moe.dense_layers", "a layer index out of range");
    if (!e.dense_layers.empty() && m.dense_intermediate_size <= 0) bad("dense_intermediate_size", "needed for the dense layers");
  } else if (m.dense_intermediate_size <= 0) {
    bad("dense_intermediate_size", "a dense model needs a positive MLP width");
  }
}

std::string fmt_int(double v) {
  // thousands separators, e.g. 131,072
  const long long x = static_cast<long long>(v < 0 ? v - 0.5 : v + 0.5);
  std::string s = std::to_string(x < 0 ? -x : x);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return x < 0 ? "-" + s : s;
}
std::string fmt_params(double p) {
  if (p >= 1e12) return fmt::format("{:.3f}T", p / 1e12);
  if (p >= 1e9) return fmt::format("{:.1f}B", p / 1e9);
  return fmt::format("{:.1f}M", p / 1e6);
}

}  // namespace k3plan
