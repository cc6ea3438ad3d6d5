#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <k3plan/figure.hpp>

namespace k3plan {

struct Gpu {
  std::string id;
  std::string name;
  std::string vendor;
  std::vector<std::string> aliases;
  std::string source;
  Figure hbm_gb;               // as sold, decimal GB
  Figure memory_reported_mib;  // what the driver reports, MiB
  Figure hbm_bandwidth_tb_s;
  Figure tflops_bf16, tflops_fp8, tflops_fp4;  // dense
  std::vector<std::string> native_formats;
  Figure scaleup_gb_s;
  int gpus_per_node = 8;
  int scaleup_domain_gpus = 8;
  Figure power_w;
  Figure price_usd_per_hour;
  std::string price_date;
  std::string origin;
  std::vector<Assumption> assumptions;

  double nominal_bytes() const { return hbm_gb.value * 1e9; }
  double reported_bytes() const { return memory_reported_mib.value * 1048576.0; }
  bool runs_natively(const std::string& format) const;
};

}  // namespace k3plan
