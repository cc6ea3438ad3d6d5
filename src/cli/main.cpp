// k3plan entry point: build the CLI, parse, dispatch, map errors to exit codes
// (0 ok / fits, 1 does not fit / check failed, 2 bad input or usage, 3 internal error).
#include <fmt/format.h>

#include <exception>
#include <k3plan/error.hpp>
#include <k3plan/output_file.hpp>
#include <new>
#include <string>

#include "cli.hpp"

int main(int argc, char** argv) {
  try {
    k3plan::Cli cli;
    if (const int code = cli.parse(argc, argv); code >= 0) return k3plan::finish_stdout(code);  // help, version, usage error
    if (cli.text) {                                                                             // completion, man: no catalogue needed
      k3plan::write_stdout(cli.text());
      return k3plan::finish_stdout(0);
    }
    auto catalogue = k3plan::Catalogue::embedded();
    for (const auto& dir : cli.global.data_dirs) catalogue.add_directory(dir);
    const auto format = k3plan::parse_format(cli.global.format);
    k3plan::Report report = cli.action(catalogue);
    k3plan::make_printable(report);  // control characters escaped, JSON strings valid UTF-8
    k3plan::TextOptions text;
    text.width = cli.global.wide ? 0 : k3plan::kTerminalWidth;
    text.all_assumptions = cli.global.all_assumptions;
    k3plan::write_stdout(k3plan::render(report, format, text));
    return k3plan::finish_stdout(report.exit_code);
  } catch (const k3plan::InputError& e) {
    k3plan::print_error_line(e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    k3plan::print_error_line("internal: out of memory");
    return 3;
  } catch (const std::exception& e) {
    k3plan::print_error_line(fmt::format("internal: {}", e.what()));
    return 3;
  }
}
