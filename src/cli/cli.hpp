#pragma once
// Builds the CLI11 parser: each subcommand fills a plain options struct; dispatch() calls the one
// run_<command>() that was selected. No computation happens here.
#include <CLI/CLI.hpp>
#include <functional>
#include <k3plan/catalogue.hpp>
#include <k3plan/report.hpp>
#include <memory>
#include <string>
#include <vector>

namespace k3plan {

struct GlobalOptions {
  std::vector<std::string> data_dirs;
  std::string format = "table";
  bool wide = false;             // tables as wide as their content (default: 100 columns)
  bool all_assumptions = false;  // list every assumption (default: the count and the first few)
};

struct Cli {
  CLI::App app{"k3plan: can this model be served on these GPUs, how many, at what context, cost and flags?", "k3plan"};
  GlobalOptions global;
  std::function<Report(const Catalogue&)> action;  // set by the selected subcommand's callback
  Cli();
};

}  // namespace k3plan
