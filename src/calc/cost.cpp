#include <algorithm>
#include <cmath>
#include <k3plan/cost.hpp>

namespace k3plan {

ApiBill api_bill(const ApiRates& r, double output_tokens, double input_tokens, double hit) {
  ApiBill b;
  b.output_usd = output_tokens / 1e6 * r.output;
  b.input_hit_usd = input_tokens * hit / 1e6 * r.input_cache_hit;
  b.input_miss_usd = input_tokens * (1 - hit) / 1e6 * r.input_cache_miss;
  return b;
}

double api_usd_per_output_token(const ApiRates& r, double input_per_output, double hit) {
  return (r.output + input_per_output * (hit * r.input_cache_hit + (1 - hit) * r.input_cache_miss)) / 1e6;
}

double break_even_output_tokens(double rent, const ApiRates& r, double input_per_output, double hit) {
  const double usd_per_output_token = api_usd_per_output_token(r, input_per_output, hit);
  return usd_per_output_token > 0 ? rent / usd_per_output_token : INFINITY;
}

std::vector<BreakEven> break_even_table(double rent, const ApiRates& r, double input_per_output, double hit, double days) {
  std::vector<BreakEven> rows;
  auto add = [&](BreakEven::Kind kind, double ipo, double h) {
    const double t = break_even_output_tokens(rent, r, ipo, h);
    rows.push_back({kind, ipo, h, t, t / days});
  };
  add(BreakEven::output_only, 0, 0);
  if (input_per_output > 0) {
    add(BreakEven::input_mix, input_per_output, hit);
    add(BreakEven::input_mix_no_cache, input_per_output, 0);
  }
  return rows;
}

double tokens_per_s_per_usd_hour(double tok_s, int gpus, double rate) { return tok_s / (gpus * rate); }

double usd_per_million_tokens(double tok_s, int gpus, double rate, double utilisation) {
  const double per_gpu = tok_s / gpus * utilisation;
  return rate * 1e6 / (3600 * per_gpu);
}

double download_seconds(double bytes, double bytes_per_s) { return bytes / bytes_per_s; }

bool fits_single_accelerator(double weights, double kv, double vram, double runtime) { return weights + kv + runtime < vram; }

}  // namespace k3plan
