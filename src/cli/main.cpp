// k3plan entry point: build the CLI, parse, dispatch, map errors to exit codes
// (0 ok / fits, 1 does not fit / check failed, 2 bad input or usage).
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include <k3plan/error.hpp>

#include "cli.hpp"

int main(int argc, char** argv) {
  k3plan::Cli cli;
  try {
    cli.app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "k3plan: error: {}\n", e.what());
    return 2;
  }
  try {
    auto catalogue = k3plan::Catalogue::embedded();
    for (const auto& dir : cli.global.data_dirs) catalogue.add_directory(dir);
    const auto format = k3plan::parse_format(cli.global.format);
    const k3plan::Report report = cli.action(catalogue);
    const std::string out = k3plan::render(report, format);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return report.exit_code;
  } catch (const k3plan::InputError& e) {
    fmt::print(stderr, "k3plan: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "k3plan: error: internal: {}\n", e.what());
    return 3;
  }
}
