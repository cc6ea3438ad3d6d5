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

double break_even_output_tokens(double rent, const ApiRates& r, double input_per_output, double hit) {
  const double usd_per_output_token = (r.output + input_per_output * (hit * r.input_cache_hit + (1 - hit) * r.input_cache_miss)) / 1e6;
  return usd_per_output_token > 0 ? rent / usd_per_output_token : INFINITY;
}

double tokens_per_s_per_usd_hour(double tok_s, int gpus, double rate) { return tok_s / (gpus * rate); }

double usd_per_million_tokens(double tok_s, int gpus, double rate, double utilisation) {
  const double per_gpu = tok_s / gpus * utilisation;
  return rate * 1e6 / (3600 * per_gpu);
}

double download_seconds(double bytes, double bytes_per_s) { return bytes / bytes_per_s; }

bool fits_single_accelerator(double weights, double kv, double vram, double runtime) { return weights + kv + runtime < vram; }

}  // namespace k3plan
