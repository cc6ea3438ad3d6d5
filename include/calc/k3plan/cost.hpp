#pragma once
// Rent vs API. Invariants (checked in tests): scenario cost = gpus x hours x rate; the API bill is
// the sum of its parts (output + input cache hits + input cache misses).
#include <string>
#include <vector>

namespace k3plan {

struct RentalScenario {
  int gpus = 0;
  double hours_per_day = 24;
  double days_per_month = 30;
  double usd_per_gpu_hour = 0;
  double gpu_hours_per_month() const { return gpus * hours_per_day * days_per_month; }
  double usd_per_month() const { return gpu_hours_per_month() * usd_per_gpu_hour; }
};

struct ApiRates {  // USD per million tokens
  double output = 0;
  double input_cache_miss = 0;
  double input_cache_hit = 0;
};

struct ApiBill {
  double output_usd = 0, input_hit_usd = 0, input_miss_usd = 0;
  double total() const { return output_usd + input_hit_usd + input_miss_usd; }
};

ApiBill api_bill(const ApiRates& r, double output_tokens, double input_tokens, double cache_hit_fraction);

// What one output token costs at the API for a workload with `input_per_output` input tokens per
// output token of which `cache_hit_fraction` hit the cache (the output plus its share of input), USD.
double api_usd_per_output_token(const ApiRates& r, double input_per_output, double cache_hit_fraction);

// Monthly output tokens at which the rented cluster costs the same as the API, for that workload;
// infinity when the API costs nothing per output token (renting never pays).
double break_even_output_tokens(double rent_usd_per_month, const ApiRates& r, double input_per_output, double cache_hit_fraction);

// The break-even table of `k3plan cost`: output only and, when the workload has input
// (input_per_output > 0), its mix with `cache_hit_fraction` cached and with no cache hits.
struct BreakEven {
  enum Kind { output_only, input_mix, input_mix_no_cache } kind = output_only;
  double input_per_output = 0;
  double cache_hit_fraction = 0;
  double output_tokens_per_month = 0;  // infinity = never
  double output_tokens_per_day = 0;    // per month / days_per_month
};
std::vector<BreakEven> break_even_table(double rent_usd_per_month, const ApiRates& r, double input_per_output, double cache_hit_fraction,
                                        double days_per_month);

// tok/s per (USD/hour) for a cluster, and USD per million tokens (InferenceX definition:
// USD_per_GPU_hour x 1e6 / (3600 x tok/s/GPU)), at an average utilisation in (0, 1].
double tokens_per_s_per_usd_hour(double tok_s, int gpus, double usd_per_gpu_hour);
double usd_per_million_tokens(double tok_s, int gpus, double usd_per_gpu_hour, double utilisation = 1.0);

// Seconds to download `bytes` at `bytes_per_s`.
double download_seconds(double bytes, double bytes_per_s);

// Tier-2 rule of thumb (seed): a model fits one accelerator if weights + KV + ~2 GB runtime < VRAM.
bool fits_single_accelerator(double weights_bytes, double kv_bytes, double vram_bytes, double runtime_bytes = 2e9);

}  // namespace k3plan
