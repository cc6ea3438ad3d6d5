// k3plan entry point: build the CLI, parse, dispatch, map errors to exit codes
// (0 ok / fits, 1 does not fit / check failed, 2 bad input or usage).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <k3plan/error.hpp>
#include <string>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
  k3plan::Cli cli;
  if (argc > 1 && argv[1][0] != '-') {  // name the unknown command instead of CLI11's "A subcommand is required"
    std::vector<std::string> names;
    for (const auto* sub : cli.app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const auto hint = k3plan::closest_match(argv[1], names);
      fmt::print(stderr, "k3plan: error: unknown command '{}'{}\n", argv[1],
                 hint.empty() ? fmt::format(" (commands: {})", fmt::join(names, ", ")) : fmt::format("; did you mean '{}'?", hint));
      return 2;
    }
  }
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
    k3plan::TextOptions text;
    text.width = cli.global.wide ? 0 : k3plan::kTerminalWidth;
    text.all_assumptions = cli.global.all_assumptions;
    const std::string out = k3plan::render(report, format, text);
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
