#pragma once
// `k3plan calibrate` (src/commands/calibrate_cmd.cpp): benchmark results the user ran on their own
// cluster -> the speed-model factors fitted for that GPU family x engine x precision x version
// (calibrate_results(), plan/calibrate.hpp) -> a Report of the error before and after per row, and
// the calibration file (-o) that `--data DIR` picks up.
#include <k3plan/calibrate.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/report.hpp>
#include <string>

namespace k3plan {

struct CalibrateCommandOptions {
  CalibrateOptions fit;
  std::string out;     // the calibration YAML to write; empty = write nothing
  bool force = false;  // replace an existing file
};
Report run_calibrate(const Catalogue& cat, const CalibrateCommandOptions& o);

}  // namespace k3plan
