#pragma once
#include <cstdint>
#include <k3plan/figure.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct Gpu {
  std::string id;
  std::string name;
  std::string vendor;
  std::vector<std::string> aliases;
  std::string source;
  Figure hbm_gb;                   // as sold, decimal GB
  Figure memory_reported_mib;      // what the driver reports, MiB
  Figure memory_engine_total_mib;  // what torch.cuda.mem_get_info() reports as total (0 = unknown: use the driver figure)
  Figure hbm_bandwidth_tb_s;
  Figure tflops_bf16, tflops_fp8, tflops_fp4;  // dense
  std::vector<std::string> native_formats;
  // CUDA compute capability (major.minor: 8.0 A100, 8.9 Ada, 9.0 Hopper, 10.0 Blackwell, 12.0 RTX
  // 50xx), which selects the engines' kernel back-ends and with them the weight layout; 0 = not an
  // NVIDIA GPU, or not stated.
  double compute_capability = 0;
  // AMD GPU instruction set (gfx942 CDNA 3, gfx950 CDNA 4), which selects ROCm kernel paths in the
  // engines (SGLang's `is_gfx95_supported()`); "" = not an AMD GPU, or not stated.
  std::string isa;
  // NVLink multicast (NVLink SHARP) behind an NVSwitch: Hopper and Blackwell HGX boards and the
  // NVL72 racks. NCCL reads CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED and, with more than 2 GPUs in the
  // communicator, sets up NVLS buffers (src/transport/nvls.cc); PCIe and bridged cards have none.
  bool nvlink_multicast = false;
  std::string nvlink_multicast_source;
  // Channels NCCL's topology search gives a collective on a full node (0 = not known). NCCL
  // 2.20-2.21 size their NVLS buffers by it (nvls.cc comm->nChannels).
  Figure nccl_channels;
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
  // The total the engines size their pools from (vLLM "total_gpu_memory"): torch's figure where
  // logs give it (H100: 79.19 GiB against nvidia-smi's 79.65 GiB), else the driver's.
  double engine_bytes() const { return memory_engine_total_mib.value > 0 ? memory_engine_total_mib.value * 1048576.0 : reported_bytes(); }
  bool runs_natively(const std::string& format) const;
  // No NVLink or Infinity Fabric between the GPUs of a node: peers talk over PCIe, whose Gen5 x16
  // link is 128 GB/s both directions; every NVLink / Infinity Fabric part in the catalogue is
  // 384 GB/s or more. SGLang turns its custom all-reduce off on such a node beyond 2 GPUs
  // (custom_all_reduce.py: world_size > 2 and not full_nvlink) and NCCL moves over PCIe.
  bool pcie_only() const { return scaleup_gb_s.value > 0 && scaleup_gb_s.value <= 128; }
};

}  // namespace k3plan
